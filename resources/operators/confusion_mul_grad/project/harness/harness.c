/*
 * ConfusionMulGrad harness (fixed: do not edit).
 *
 *   harness <case_dir> <out_dir> [--reps N] [--flush-bytes N]
 *
 * Reads <case_dir>/case.txt and input0.bin .. input2.bin (raw little-endian), places every buffer
 * in one arena at a fixed address (so cache behaviour depends only on the code), fences each
 * buffer with guard zones, calls cmg_tiling then confusion_mul_grad N times, and writes
 * output0.bin, output1.bin and run.json into <out_dir>.
 *
 * Before every repetition the outputs are refilled with NaN markers, the workspace with 0xFF
 * bytes, and (unless --flush-bytes 0) a flush buffer is swept to evict the caches.
 *
 * Exit codes: 0 ok, 2 usage, 3 bad case files, 4 arena mapping failed, 5 tiling rejected the
 * shapes or asked for too much workspace, 6 cannot write outputs, 86 guard zone violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cmg_abi.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define ARENA_BASE ((uintptr_t)0x200000000000ULL)
#define FLUSH_BASE ((uintptr_t)0x300000000000ULL)
#define PAGE_BYTES ((int64_t)4096)
#define GUARD_BYTES ((int64_t)4096)
#define WORKSPACE_CAP ((int64_t)256 << 20)
#define BUFFER_CAP ((int64_t)1 << 32)
#define FLUSH_DEFAULT ((int64_t)8 << 20)
#define FLUSH_CAP ((int64_t)1 << 30)
#define MAX_REPS 1000

enum {
    EXIT_USAGE = 2,
    EXIT_CASE = 3,
    EXIT_ARENA = 4,
    EXIT_TILING = 5,
    EXIT_OUTPUT = 6,
    EXIT_GUARD = 86,
};

enum { B_IN0, B_IN1, B_IN2, B_OUT0, B_OUT1, B_WS, B_COUNT };

static const char* const BUFFER_NAMES[B_COUNT] = {"input0", "input1", "input2",
                                                  "output0", "output1", "workspace"};

typedef struct {
    unsigned char* data;   /* page aligned */
    int64_t bytes;         /* payload size */
    unsigned char* pre;    /* guard before data */
    unsigned char* post;   /* guard after data, up to the next page boundary */
    int64_t post_bytes;
} Slot;

typedef struct {
    char id[128];
    CmgShapeInfo info;
    int32_t out_rank[2];
    int64_t out_shape[2][CMG_MAX_DIMS];
} CaseDesc;

static void die(int code, const char* fmt, const char* arg) {
    fprintf(stderr, "harness: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(code);
}

static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

static int64_t elements(int32_t rank, const int64_t* shape) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (shape[d] < 1 || n > BUFFER_CAP / shape[d]) {
            return -1;
        }
        n *= shape[d];
    }
    return n;
}

static void read_shape(FILE* f, const char* key, int32_t* rank, int64_t* shape) {
    if (fscanf(f, "%d", rank) != 1 || *rank < 0 || *rank > CMG_MAX_DIMS) {
        die(EXIT_CASE, "case.txt: bad rank for %s", key);
    }
    for (int32_t d = 0; d < *rank; d++) {
        long long v;
        if (fscanf(f, "%lld", &v) != 1 || v < 1) {
            die(EXIT_CASE, "case.txt: bad extent for %s", key);
        }
        shape[d] = (int64_t)v;
    }
}

static void parse_case(const char* path, CaseDesc* c) {
    FILE* f = fopen(path, "r");
    if (!f) {
        die(EXIT_CASE, "cannot open %s", path);
    }
    char key[64];
    int version = 0;
    unsigned seen = 0;
    memset(c, 0, sizeof *c);
    while (fscanf(f, "%63s", key) == 1) {
        if (strcmp(key, "cmg_case") == 0) {
            if (fscanf(f, "%d", &version) != 1 || version != 1) {
                die(EXIT_CASE, "case.txt: unsupported version in %s", path);
            }
            seen |= 1u;
        } else if (strcmp(key, "id") == 0) {
            if (fscanf(f, "%127s", c->id) != 1) {
                die(EXIT_CASE, "case.txt: bad id in %s", path);
            }
        } else if (strcmp(key, "dtype") == 0) {
            char name[16];
            if (fscanf(f, "%15s", name) != 1) {
                die(EXIT_CASE, "case.txt: bad dtype in %s", path);
            }
            if (strcmp(name, "float32") == 0) {
                c->info.dtype = CMG_DTYPE_FLOAT32;
            } else if (strcmp(name, "float16") == 0) {
                c->info.dtype = CMG_DTYPE_FLOAT16;
            } else {
                die(EXIT_CASE, "case.txt: unknown dtype %s", name);
            }
            seen |= 2u;
        } else if (strncmp(key, "input", 5) == 0 && key[5] >= '0' && key[5] <= '2' && !key[6]) {
            int i = key[5] - '0';
            read_shape(f, key, &c->info.rank[i], c->info.shape[i]);
            seen |= 4u << i;
        } else if (strncmp(key, "output", 6) == 0 && key[6] >= '0' && key[6] <= '1' && !key[7]) {
            int i = key[6] - '0';
            read_shape(f, key, &c->out_rank[i], c->out_shape[i]);
            seen |= 32u << i;
        } else if (strcmp(key, "axes") == 0) {
            if (fscanf(f, "%d", &c->info.num_axes) != 1 || c->info.num_axes < 0 ||
                c->info.num_axes > CMG_MAX_DIMS) {
                die(EXIT_CASE, "case.txt: bad axes count in %s", path);
            }
            for (int32_t a = 0; a < c->info.num_axes; a++) {
                if (fscanf(f, "%d", &c->info.axes[a]) != 1) {
                    die(EXIT_CASE, "case.txt: bad axis in %s", path);
                }
            }
            seen |= 128u;
        } else if (strcmp(key, "keep_dims") == 0) {
            if (fscanf(f, "%d", &c->info.keep_dims) != 1) {
                die(EXIT_CASE, "case.txt: bad keep_dims in %s", path);
            }
            seen |= 256u;
        } else {
            die(EXIT_CASE, "case.txt: unknown key %s", key);
        }
    }
    fclose(f);
    if (seen != 511u) {
        die(EXIT_CASE, "case.txt: missing keys in %s", path);
    }
}

/* Map [addr, addr+bytes) exactly there, or fail: a moved arena would change cache behaviour. */
static unsigned char* map_fixed(uintptr_t addr, int64_t bytes) {
    void* p = mmap((void*)addr, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) {
        die(EXIT_ARENA, "cannot map the arena at its fixed address: %s", strerror(errno));
    }
    if ((uintptr_t)p != addr) {
        munmap(p, (size_t)bytes);
        die(EXIT_ARENA, "%s", "the kernel placed the arena elsewhere (MAP_FIXED_NOREPLACE unsupported)");
    }
    return (unsigned char*)p;
}

static unsigned char guard_byte(int64_t i) { return (unsigned char)(0x5a ^ (i * 31)); }

static void fill_guard(unsigned char* p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        p[i] = guard_byte(i);
    }
}

static int64_t first_bad_guard(const unsigned char* p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (p[i] != guard_byte(i)) {
            return i;
        }
    }
    return -1;
}

static void check_guards(const Slot* slots) {
    for (int b = 0; b < B_COUNT; b++) {
        int64_t pre = first_bad_guard(slots[b].pre, GUARD_BYTES);
        int64_t post = first_bad_guard(slots[b].post, slots[b].post_bytes);
        if (pre >= 0 || post >= 0) {
            fprintf(stderr, "harness: guard violation: %s %s-guard modified at byte %lld %s it\n",
                    BUFFER_NAMES[b], pre >= 0 ? "pre" : "post",
                    (long long)(pre >= 0 ? GUARD_BYTES - pre : post),
                    pre >= 0 ? "before" : "after the end of");
            exit(EXIT_GUARD);
        }
    }
}

static void load_input(const char* case_dir, int b, Slot* slot) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", case_dir, BUFFER_NAMES[b]);
    FILE* f = fopen(path, "rb");
    if (!f) {
        die(EXIT_CASE, "cannot open %s", path);
    }
    size_t got = fread(slot->data, 1, (size_t)slot->bytes, f);
    int extra = fgetc(f);
    fclose(f);
    if ((int64_t)got != slot->bytes || extra != EOF) {
        die(EXIT_CASE, "%s does not match the shape in case.txt", path);
    }
}

static void write_output(const char* out_dir, const char* name, const Slot* slot) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", out_dir, name);
    FILE* f = fopen(path, "wb");
    if (!f) {
        die(EXIT_OUTPUT, "cannot write %s", path);
    }
    size_t put = fwrite(slot->data, 1, (size_t)slot->bytes, f);
    if (fclose(f) != 0 || (int64_t)put != slot->bytes) {
        die(EXIT_OUTPUT, "cannot write %s", path);
    }
}

static void fill_nan(Slot* slot, int32_t dtype) {
    if (dtype == CMG_DTYPE_FLOAT16) {
        uint16_t* p = (uint16_t*)slot->data;
        for (int64_t i = 0; i < slot->bytes / 2; i++) {
            p[i] = 0x7e5au;
        }
    } else {
        uint32_t* p = (uint32_t*)slot->data;
        for (int64_t i = 0; i < slot->bytes / 4; i++) {
            p[i] = 0x7fc0cafeu;
        }
    }
}

static void flush_caches(unsigned char* buf, int64_t bytes) {
    volatile unsigned char* p = buf;
    for (int64_t i = 0; i < bytes; i += 64) {
        p[i] = (unsigned char)(p[i] + 1);
    }
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t parse_count(const char* text, const char* flag, int64_t max) {
    char* end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || !end || *end || v < 0 || v > max) {
        die(EXIT_USAGE, "bad value for %s", flag);
    }
    return (int64_t)v;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: harness <case_dir> <out_dir> [--reps N] [--flush-bytes N]\n");
        return EXIT_USAGE;
    }
    const char* case_dir = argv[1];
    const char* out_dir = argv[2];
    int64_t reps = 1;
    int64_t flush_bytes = FLUSH_DEFAULT;
    for (int i = 3; i < argc; i += 2) {
        if (i + 1 >= argc) {
            die(EXIT_USAGE, "missing value for %s", argv[i]);
        }
        if (strcmp(argv[i], "--reps") == 0) {
            reps = parse_count(argv[i + 1], "--reps", MAX_REPS);
        } else if (strcmp(argv[i], "--flush-bytes") == 0) {
            flush_bytes = parse_count(argv[i + 1], "--flush-bytes", FLUSH_CAP);
        } else {
            die(EXIT_USAGE, "unknown option %s", argv[i]);
        }
    }
    if (reps < 1) {
        die(EXIT_USAGE, "%s", "--reps must be at least 1");
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/case.txt", case_dir);
    CaseDesc desc;
    parse_case(path, &desc);
    const int64_t elem = desc.info.dtype == CMG_DTYPE_FLOAT16 ? 2 : 4;

    /* The header page holds the shape info and the tiling, at the arena base. */
    unsigned char* header = map_fixed(ARENA_BASE, PAGE_BYTES);
    CmgShapeInfo* info = (CmgShapeInfo*)header;
    CmgTiling* tiling = (CmgTiling*)(header + round_up((int64_t)sizeof(CmgShapeInfo), 64));
    *info = desc.info;
    int rc = cmg_tiling(info, tiling);
    if (rc != 0) {
        fprintf(stderr, "harness: cmg_tiling rejected the case (returned %d)\n", rc);
        return EXIT_TILING;
    }
    if (tiling->workspace_size < 0 || tiling->workspace_size > WORKSPACE_CAP) {
        fprintf(stderr, "harness: workspace_size %lld outside [0, %lld]\n",
                (long long)tiling->workspace_size, (long long)WORKSPACE_CAP);
        return EXIT_TILING;
    }
    if (mprotect(header, (size_t)PAGE_BYTES, PROT_READ) != 0) {
        die(EXIT_ARENA, "%s", "cannot protect the tiling page");
    }

    int64_t bytes[B_COUNT];
    for (int i = 0; i < 3; i++) {
        int64_t n = elements(desc.info.rank[i], desc.info.shape[i]);
        if (n < 0) {
            die(EXIT_CASE, "%s is too large", BUFFER_NAMES[i]);
        }
        bytes[i] = n * elem;
    }
    for (int i = 0; i < 2; i++) {
        int64_t n = elements(desc.out_rank[i], desc.out_shape[i]);
        if (n < 0) {
            die(EXIT_CASE, "%s is too large", BUFFER_NAMES[B_OUT0 + i]);
        }
        bytes[B_OUT0 + i] = n * elem;
    }
    bytes[B_WS] = tiling->workspace_size;

    /* Slot layout: [guard page][data, page aligned][guard >= 4 KiB up to a page boundary]. */
    int64_t total = 0;
    for (int b = 0; b < B_COUNT; b++) {
        total += GUARD_BYTES + round_up(bytes[b] + GUARD_BYTES, PAGE_BYTES);
    }
    unsigned char* arena = map_fixed(ARENA_BASE + (uintptr_t)PAGE_BYTES, total);
    Slot slots[B_COUNT];
    unsigned char* cursor = arena;
    for (int b = 0; b < B_COUNT; b++) {
        slots[b].pre = cursor;
        slots[b].data = cursor + GUARD_BYTES;
        slots[b].bytes = bytes[b];
        slots[b].post = slots[b].data + bytes[b];
        slots[b].post_bytes = round_up(bytes[b] + GUARD_BYTES, PAGE_BYTES) - bytes[b];
        fill_guard(slots[b].pre, GUARD_BYTES);
        fill_guard(slots[b].post, slots[b].post_bytes);
        cursor = slots[b].post + slots[b].post_bytes;
    }
    for (int b = B_IN0; b <= B_IN2; b++) {
        load_input(case_dir, b, &slots[b]);
        size_t span = (size_t)(GUARD_BYTES + round_up(bytes[b] + GUARD_BYTES, PAGE_BYTES));
        if (mprotect(slots[b].pre, span, PROT_READ) != 0) {
            die(EXIT_ARENA, "cannot protect %s", BUFFER_NAMES[b]);
        }
    }

    unsigned char* flush = flush_bytes > 0 ? map_fixed(FLUSH_BASE, flush_bytes) : NULL;
    int64_t* times = calloc((size_t)reps, sizeof *times);
    if (!times) {
        die(EXIT_ARENA, "%s", "out of memory");
    }
    for (int64_t r = 0; r < reps; r++) {
        fill_nan(&slots[B_OUT0], desc.info.dtype);
        fill_nan(&slots[B_OUT1], desc.info.dtype);
        memset(slots[B_WS].data, 0xff, (size_t)slots[B_WS].bytes);
        if (flush) {
            flush_caches(flush, flush_bytes);
        }
        int64_t t0 = now_ns();
        confusion_mul_grad(slots[B_IN0].data, slots[B_IN1].data, slots[B_IN2].data,
                           slots[B_OUT0].data, slots[B_OUT1].data, slots[B_WS].data, tiling);
        times[r] = now_ns() - t0;
        check_guards(slots);
    }

    write_output(out_dir, "output0", &slots[B_OUT0]);
    write_output(out_dir, "output1", &slots[B_OUT1]);
    int64_t best = times[0];
    snprintf(path, sizeof path, "%s/run.json", out_dir);
    FILE* f = fopen(path, "w");
    if (!f) {
        die(EXIT_OUTPUT, "cannot write %s", path);
    }
    fprintf(f, "{\"case\": \"%s\", \"reps\": %lld, \"workspace_bytes\": %lld, \"kernel_ns\": [",
            desc.id, (long long)reps, (long long)tiling->workspace_size);
    for (int64_t r = 0; r < reps; r++) {
        best = times[r] < best ? times[r] : best;
        fprintf(f, "%s%lld", r ? ", " : "", (long long)times[r]);
    }
    fprintf(f, "], \"min_kernel_ns\": %lld}\n", (long long)best);
    if (fclose(f) != 0) {
        die(EXIT_OUTPUT, "cannot write %s", path);
    }
    printf("%s ok reps=%lld min_kernel_ns=%lld\n", desc.id, (long long)reps, (long long)best);
    free(times);
    return 0;
}
