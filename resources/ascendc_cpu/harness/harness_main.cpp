// ascendc-cpu harness (fixed, trusted: the toolchain compiles it once per toolchain version).
//
//   harness_<dt> <case_dir> <out_dir> [--trace] [--no-hazard-checks]
//
// Reads <case_dir>/case.txt and input0.bin .. input2.bin (the CPU harness's case folder: see
// resources/operators/confusion_mul_grad/project/harness/harness.c and operators/rawfiles.py),
// fills a gert::TilingContext (input shapes and dtype, output shapes, the attributes the OpDef
// declares, the platform from the SoC file), calls the tiling function OP_ADD registered, checks
// block_dim (1..vector_cores), the tiling size and the workspace (<= 256 MiB), registers the GM
// buffers with the engine (inputs read-only, outputs NaN-filled, workspace 0xFF), runs blocks
// 0..block_dim-1 side by side (jk::run_blocks: SyncAll is a real barrier), and writes into
// <out_dir>: output0.bin, output1.bin, run.json and, with --trace, trace.json (Chrome
// trace-event format). On the first API misuse: misuse.json {"check", "message", "file", "line", "block"} and exit 7.
//
// The kernel sees fake GM addresses (the engine's registry translates them in SetGlobalBuffer);
// the harness reserves that range with no access, so a kernel that dereferences a GM pointer
// directly faults there, and the SIGSEGV handler reports misuse `gm_raw_access`. The tiling
// pointer is real (GET_TILING_DATA copies from it) but read-only while the blocks run: a write is
// misuse `gm_write_readonly` (all cores share one tiling).
// --no-hazard-checks (tests only; the toolchain never passes it) turns off pipeline_hazard and
// cross_core_race, to show a racy kernel passes a plain CPU run.
//
// Outputs are deterministic: no time, no address, no randomness in run.json or trace.json.
// Exit codes: 0 ok, 2 usage, 3 bad case files, 4 the fake GM range cannot be reserved,
// 5 tiling rejected (failure status, no tiling function, block_dim out of range, tiling data or
// workspace too large), 6 cannot write outputs, 7 api_misuse; anything else is a crash.
//
//   harness_<dt> --batch [--trace] [--no-hazard-checks] [--case-wall S] [--case-cpu S] <case_dir>:<out_dir> ...
//
// Batch mode (toolchains/ascendc_cpu/batch.py: the re-run rule and the threat model). The parent
// runs no case itself: for each pair, in order, it forks a child that does exactly what a single
// run does (run_case, then exit with its code: fresh statics, tiling mapping, fake GM reservation,
// fault handler and OP_ADD registration by construction), with RLIMIT_CPU = S (hard S+1, as
// prlimit) and stdout/stderr in <out_dir>/harness.stdout and harness.stderr. The parent waits with
// wait4 (the child's CPU seconds), kills it after --case-wall seconds, then kills and reaps
// whatever it left (the parent is a child subreaper), notes the case's files (inode, size, mode,
// links, mtime, ctime) and waits until the clock that stamps ctime is past them; after a case that
// timed out or died of SIGXCPU, SIGXFSZ, SIGKILL or SIGSYS it starts no more. At the end it checks
// the noted files again and writes one line, last, on its own stdout (it is non-dumpable, so no
// child can open /proc/<parent>/fd):
//   jk-batch {"schema": 1, "cases": [{"out", "state" (exit|signal|timeout|not_run|fork_failed),
//             "code", "signal", "cpu_seconds", "wall_seconds", "intact"}, ...]}
// "intact" is true only for exit 0 with the case's files unchanged since its child ended. Exit 0
// with the report; 70 (no report) if the processes a case left could not be cleared. The parent ends
// with _exit: no static destructor (team code) runs in it after the report.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

// The one compiled copy of the library's non-template functions: team objects are built with
// -DJK_ENGINE_EXTERN and only declare them (jk_ascendc/engine.h).
#define JK_ENGINE_IMPL
#include "kernel_operator.h"
#include "jk_ascendc/engine.h"
#include "jk_ascendc/host_platform.h"
#include "jk_ascendc/run_blocks.h"
#include "jk_ascendc/tiling_kernel.h"
#include "jk_soc_params.h"
#include "register/op_def_registry.h"

extern "C" ops::OpDef* jk_op_add_create(void);
extern "C" const char* jk_op_add_type(void);
extern "C" void confusion_mul_grad(uint8_t* input0, uint8_t* input1, uint8_t* input2, uint8_t* output0,
                                   uint8_t* output1, uint8_t* workspace, uint8_t* tiling);

namespace {

enum ExitCode {
    EXIT_OK = 0,
    EXIT_USAGE = 2,
    EXIT_CASE = 3,
    EXIT_GM_RANGE = 4,
    EXIT_TILING = 5,
    EXIT_OUTPUT = 6,
    EXIT_MISUSE = 7,
    EXIT_CRASH = 1,
};

constexpr int kMaxDims = 8;
constexpr uint64_t kWorkspaceCap = uint64_t(256) << 20;
constexpr uint64_t kBufferCap = uint64_t(1) << 32;
constexpr size_t kTilingCapacity = 64 * 1024;
constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGmSlack = uint64_t(64) << 20;

enum { B_IN0, B_IN1, B_IN2, B_OUT0, B_OUT1, B_WS, B_COUNT };
const char* const kBufferNames[B_COUNT] = {"input0", "input1", "input2", "output0", "output1", "workspace"};

struct CaseDesc {
    std::string id;
    std::string dtype;  // "float32" | "float16"
    int rank[5] = {0, 0, 0, 0, 0};
    int64_t shape[5][kMaxDims] = {};
    int num_axes = 0;
    int64_t axes[kMaxDims] = {};
    int keep_dims = 0;
};

[[noreturn]] void die(int code, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "harness: ");
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    va_end(ap);
    std::exit(code);
}

// ---- case.txt ---------------------------------------------------------------------------------
void read_shape(FILE* f, const char* key, int* rank, int64_t* shape) {
    if (std::fscanf(f, "%d", rank) != 1 || *rank < 0 || *rank > kMaxDims) die(EXIT_CASE, "case.txt: bad rank for %s", key);
    for (int d = 0; d < *rank; ++d) {
        long long v;
        if (std::fscanf(f, "%lld", &v) != 1 || v < 1) die(EXIT_CASE, "case.txt: bad extent for %s", key);
        shape[d] = static_cast<int64_t>(v);
    }
}

CaseDesc parse_case(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) die(EXIT_CASE, "cannot open %s", path.c_str());
    CaseDesc c;
    char key[64];
    unsigned seen = 0;
    while (std::fscanf(f, "%63s", key) == 1) {
        if (std::strcmp(key, "cmg_case") == 0) {
            int version = 0;
            if (std::fscanf(f, "%d", &version) != 1 || version != 1) die(EXIT_CASE, "case.txt: unsupported version");
            seen |= 1u;
        } else if (std::strcmp(key, "id") == 0) {
            char id[128];
            if (std::fscanf(f, "%127s", id) != 1) die(EXIT_CASE, "case.txt: bad id");
            c.id = id;
        } else if (std::strcmp(key, "dtype") == 0) {
            char name[16];
            if (std::fscanf(f, "%15s", name) != 1) die(EXIT_CASE, "case.txt: bad dtype");
            if (std::strcmp(name, "float32") != 0 && std::strcmp(name, "float16") != 0) {
                die(EXIT_CASE, "case.txt: unknown dtype %s", name);
            }
            c.dtype = name;
            seen |= 2u;
        } else if (std::strncmp(key, "input", 5) == 0 && key[5] >= '0' && key[5] <= '2' && !key[6]) {
            const int i = key[5] - '0';
            read_shape(f, key, &c.rank[i], c.shape[i]);
            seen |= 4u << i;
        } else if (std::strncmp(key, "output", 6) == 0 && key[6] >= '0' && key[6] <= '1' && !key[7]) {
            const int i = key[6] - '0';
            read_shape(f, key, &c.rank[3 + i], c.shape[3 + i]);
            seen |= 32u << i;
        } else if (std::strcmp(key, "axes") == 0) {
            if (std::fscanf(f, "%d", &c.num_axes) != 1 || c.num_axes < 0 || c.num_axes > kMaxDims) {
                die(EXIT_CASE, "case.txt: bad axes count");
            }
            for (int a = 0; a < c.num_axes; ++a) {
                long long v;
                if (std::fscanf(f, "%lld", &v) != 1) die(EXIT_CASE, "case.txt: bad axis");
                c.axes[a] = static_cast<int64_t>(v);
            }
            seen |= 128u;
        } else if (std::strcmp(key, "keep_dims") == 0) {
            if (std::fscanf(f, "%d", &c.keep_dims) != 1) die(EXIT_CASE, "case.txt: bad keep_dims");
            seen |= 256u;
        } else {
            die(EXIT_CASE, "case.txt: unknown key %s", key);
        }
    }
    std::fclose(f);
    if (seen != 511u) die(EXIT_CASE, "case.txt: missing keys in %s", path.c_str());
    return c;
}

uint64_t elements(int rank, const int64_t* shape) {
    uint64_t n = 1;
    for (int d = 0; d < rank; ++d) {
        if (static_cast<uint64_t>(shape[d]) > kBufferCap / n) return 0;
        n *= static_cast<uint64_t>(shape[d]);
    }
    return n;
}

gert::StorageShape storage_shape(int rank, const int64_t* shape) {
    gert::StorageShape s;
    for (int d = 0; d < rank; ++d) {
        s.MutableOriginShape().AppendDim(shape[d]);
        s.MutableStorageShape().AppendDim(shape[d]);
    }
    return s;
}

// ---- buffers ------------------------------------------------------------------------------------
struct Buffer {
    std::vector<uint8_t> data;  // at least 64 bytes so an empty buffer still has an address
    uint64_t bytes = 0;
    uint64_t fake = 0;
};

void load_input(const std::string& case_dir, int b, Buffer& buf) {
    const std::string path = case_dir + "/" + kBufferNames[b] + ".bin";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) die(EXIT_CASE, "cannot open %s", path.c_str());
    const size_t got = std::fread(buf.data.data(), 1, buf.bytes, f);
    const int extra = std::fgetc(f);
    std::fclose(f);
    if (got != buf.bytes || extra != EOF) die(EXIT_CASE, "%s does not match the shape in case.txt", path.c_str());
}

void fill_nan(Buffer& buf, bool half) {
    if (half) {
        for (uint64_t i = 0; i + 2 <= buf.bytes; i += 2) {
            const uint16_t v = 0x7e5au;
            std::memcpy(buf.data.data() + i, &v, 2);
        }
    } else {
        for (uint64_t i = 0; i + 4 <= buf.bytes; i += 4) {
            const uint32_t v = 0x7fc0cafeu;
            std::memcpy(buf.data.data() + i, &v, 4);
        }
    }
}

// ---- JSON output ----------------------------------------------------------------------------------
std::string json_str(const std::string& s) {
    std::string out = "\"";
    for (unsigned char ch : s) {
        switch (ch) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (ch < 0x20) {
                    char esc[8];
                    std::snprintf(esc, sizeof esc, "\\u%04x", ch);
                    out += esc;
                } else {
                    out += static_cast<char>(ch);
                }
        }
    }
    return out + "\"";
}

// Fixed-point text for a non-negative double (deterministic, no locale, no exponent).
std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

void write_file(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
    const size_t put = std::fwrite(text.data(), 1, text.size(), f);
    if (std::fclose(f) != 0 || put != text.size()) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
}

void write_output(const std::string& out_dir, const char* name, const Buffer& buf) {
    const std::string path = out_dir + "/" + name + ".bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
    const size_t put = std::fwrite(buf.data.data(), 1, buf.bytes, f);
    if (std::fclose(f) != 0 || put != buf.bytes) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
}

std::string misuse_json(const std::string& check, const std::string& message, const std::string* file,
                        long line, long block) {
    std::string s = "{\"check\": " + json_str(check) + ", \"message\": " + json_str(message) + ", \"file\": ";
    s += file ? json_str(*file) : "null";
    s += ", \"line\": ";
    s += file ? std::to_string(line) : "null";
    s += ", \"block\": ";
    s += block >= 0 ? std::to_string(block) : "null";
    return s + "}\n";
}

// ---- raw GM access: SIGSEGV inside the reserved fake range ---------------------------------------
struct FaultState {
    uint64_t lo = 0, hi = 0;  // reserved fake range
    uint64_t tiling_lo = 0, tiling_hi = 0;  // the tiling bytes, read-only while blocks run
    const Buffer* buffers = nullptr;
    int32_t block = -1;
    char misuse_path[4200] = {};
};
FaultState g_fault;
char g_fault_text[2048];

void on_segv(int sig, siginfo_t* info, void*) {
    const uint64_t addr = reinterpret_cast<uint64_t>(info->si_addr);
    const bool tiling_write = addr >= g_fault.tiling_lo && addr < g_fault.tiling_hi;
    if (!tiling_write && (addr < g_fault.lo || addr >= g_fault.hi)) {
        signal(sig, SIG_DFL);  // a real crash: let it end the process as one
        raise(sig);
        return;
    }
    // Which buffer the address falls in (or past), for a message without addresses.
    const char* name = nullptr;
    uint64_t offset = 0;
    bool inside = false;
    for (int b = 0; b < B_COUNT; ++b) {
        const Buffer& buf = g_fault.buffers[b];
        if (addr >= buf.fake && addr < buf.fake + buf.bytes + kMiB) {
            name = kBufferNames[b];
            offset = addr - buf.fake;
            inside = addr < buf.fake + buf.bytes;
        }
    }
    // First misuse wins: if the engine recorded one before the fault, report that one.
    const jk::MisuseRecord* first = jk::g_engine ? jk::g_engine->first_misuse() : nullptr;
    int n;
    if (first) {
        n = std::snprintf(g_fault_text, sizeof g_fault_text, "%s",
                          misuse_json(first->check, first->message, &first->file, first->line, first->block).c_str());
    } else if (tiling_write) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      "the kernel wrote byte %" PRIu64 " of the tiling data, which is read-only on the device "
                      "side (every core reads the same tiling)",
                      addr - g_fault.tiling_lo);
        n = std::snprintf(g_fault_text, sizeof g_fault_text, "%s",
                          misuse_json("gm_write_readonly", msg, nullptr, 0, g_fault.block).c_str());
    } else {
        char where[128];
        if (name != nullptr) {
            std::snprintf(where, sizeof where, "byte %" PRIu64 " %s %s", offset, inside ? "of" : "past the end of", name);
        } else {
            std::snprintf(where, sizeof where, "outside every GM buffer");
        }
        char msg[512];
        std::snprintf(msg, sizeof msg,
                      "the kernel dereferenced a GM pointer directly (%s): GM is reached through GlobalTensor "
                      "(SetGlobalBuffer, DataCopy, GetValue/SetValue); direct scalar access to GM is not modelled",
                      where);
        n = std::snprintf(g_fault_text, sizeof g_fault_text, "%s",
                          misuse_json("gm_raw_access", msg, nullptr, 0, g_fault.block).c_str());
    }
    FILE* f = std::fopen(g_fault.misuse_path, "wb");
    if (f) {
        std::fwrite(g_fault_text, 1, static_cast<size_t>(n > 0 ? n : 0), f);
        std::fclose(f);
        _exit(EXIT_MISUSE);
    }
    _exit(EXIT_OUTPUT);
}

void install_fault_handler() {
    static char alt_stack[1 << 16];
    stack_t ss{};
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
}

// ---- run.json / trace.json ---------------------------------------------------------------------
const jk::Pipe kReportedPipes[] = {jk::Pipe::S, jk::Pipe::V, jk::Pipe::MTE2, jk::Pipe::MTE3};

bool pipe_reported(const jk::Engine& e, jk::Pipe p) {
    for (jk::Pipe q : kReportedPipes) {
        if (q == p) return true;
    }
    for (const auto& c : e.cores()) {
        const auto& s = c.pipes[static_cast<int>(p)];
        if (s.busy || s.instructions) return true;
    }
    return false;
}

std::string run_json(const jk::Engine& e, const CaseDesc&, uint32_t block_dim, uint64_t ws_bytes, size_t tiling_bytes) {
    const auto& cores = e.cores();
    const int slow = e.slowest_core();
    std::string s = "{\"schema\": 1, \"soc\": " + json_str(e.soc().name) + ", \"block_dim\": " + std::to_string(block_dim) +
                    ", \"workspace_bytes\": " + std::to_string(ws_bytes) + ", \"tiling_bytes\": " + std::to_string(tiling_bytes) +
                    ",\n \"cycles\": {\"total\": " + std::to_string(e.total_cycles()) + ", \"bound_pipe\": " +
                    (slow >= 0 ? json_str(jk::pipe_name(e.bound_pipe())) : std::string("null")) + ",\n  \"cores\": [";
    for (size_t i = 0; i < cores.size(); ++i) {
        const auto& c = cores[i];
        s += (i ? ",\n   " : "\n   ");
        s += "{\"block\": " + std::to_string(c.block) + ", \"makespan\": " + std::to_string(c.makespan) + ", \"pipes\": {";
        bool first = true;
        for (int p = 0; p < jk::kPipes; ++p) {
            if (!pipe_reported(e, static_cast<jk::Pipe>(p))) continue;
            s += first ? "" : ", ";
            first = false;
            s += json_str(jk::pipe_name(static_cast<jk::Pipe>(p))) + ": {\"busy\": " + std::to_string(c.pipes[p].busy) +
                 ", \"instructions\": " + std::to_string(c.pipes[p].instructions) + "}";
        }
        s += "}}";
    }
    s += "],\n  \"pipes\": {";
    bool first = true;
    for (int p = 0; p < jk::kPipes; ++p) {
        if (!pipe_reported(e, static_cast<jk::Pipe>(p))) continue;
        const uint64_t busy = slow >= 0 ? cores[static_cast<size_t>(slow)].pipes[p].busy : 0;
        const uint64_t span = slow >= 0 ? cores[static_cast<size_t>(slow)].makespan : 0;
        s += first ? "" : ", ";
        first = false;
        s += json_str(jk::pipe_name(static_cast<jk::Pipe>(p))) + ": {\"busy\": " + std::to_string(busy) +
             ", \"utilisation\": " + (span ? fixed(static_cast<double>(busy) / static_cast<double>(span), 6) : std::string("0.0")) + "}";
    }
    s += "}},\n \"ops\": [";
    const auto ops = e.op_stats();
    for (size_t i = 0; i < ops.size(); ++i) {
        s += (i ? ",\n  " : "\n  ");
        s += "{\"op\": " + json_str(ops[i].op) + ", \"pipe\": " + json_str(jk::pipe_name(ops[i].pipe)) +
             ", \"calls\": " + std::to_string(ops[i].calls) + ", \"cycles\": " + std::to_string(ops[i].cycles) + "}";
    }
    s += std::string("],\n \"trace_truncated\": ") + (e.trace_truncated() ? "true" : "false") + "}\n";
    return s;
}

// Chrome trace-event format: one process per core, one thread per pipe, complete events in µs.
void write_trace(const jk::Engine& e, const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
    const double mhz = e.soc().clock_mhz > 0 ? e.soc().clock_mhz : 1.0;
    std::string s = "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"soc\": " + json_str(e.soc().name) +
                    ", \"clock_mhz\": " + fixed(mhz, 3) + ", \"truncated\": " + (e.trace_truncated() ? "true" : "false") +
                    "},\n\"traceEvents\": [";
    bool first = true;
    auto emit = [&](const std::string& ev) {
        s += first ? "\n" : ",\n";
        first = false;
        s += ev;
        if (s.size() > (1u << 20)) {
            std::fwrite(s.data(), 1, s.size(), f);
            s.clear();
        }
    };
    for (const auto& c : e.cores()) {
        const std::string pid = std::to_string(c.block);
        emit("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid + ", \"tid\": 0, \"args\": {\"name\": \"core " + pid + "\"}}");
        for (int p = 0; p < jk::kPipes; ++p) {
            if (!pipe_reported(e, static_cast<jk::Pipe>(p))) continue;
            emit("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + std::to_string(p) +
                 ", \"args\": {\"name\": " + json_str(jk::pipe_name(static_cast<jk::Pipe>(p))) + "}}");
        }
    }
    for (const auto& ev : e.trace()) {
        const std::string site = std::string(ev.site.file ? ev.site.file : "?") + ":" + std::to_string(ev.site.line);
        emit("{\"ph\": \"X\", \"name\": " + json_str(ev.op ? ev.op : "?") + ", \"pid\": " + std::to_string(ev.core) +
             ", \"tid\": " + std::to_string(static_cast<int>(ev.pipe)) + ", \"ts\": " + fixed(static_cast<double>(ev.start) / mhz, 4) +
             ", \"dur\": " + fixed(static_cast<double>(ev.dur) / mhz, 4) + ", \"args\": {\"cycles\": " + std::to_string(ev.dur) +
             ", \"start_cycle\": " + std::to_string(ev.start) + ", \"site\": " + json_str(site) + "}}");
    }
    s += "\n]}\n";
    const size_t put = std::fwrite(s.data(), 1, s.size(), f);
    if (std::fclose(f) != 0 || put != s.size()) die(EXIT_OUTPUT, "cannot write %s", path.c_str());
}

// ---- attributes: by name from the OpDef's declaration, in its order --------------------------------
bool fill_attrs(const ops::OpDef& def, const CaseDesc& c, gert::RuntimeAttrs& attrs) {
    using Kind = ops::OpAttrDef::Kind;
    for (const ops::OpAttrDef& a : def.jk_attrs()) {
        bool ok = true;
        if (a.jk_name() == "axes" && a.jk_kind() == Kind::LIST_INT) {
            ok = attrs.jk_add_list_int(c.axes, static_cast<size_t>(c.num_axes));
        } else if (a.jk_name() == "keep_dims" && a.jk_kind() == Kind::BOOL) {
            ok = attrs.jk_add_bool(c.keep_dims != 0);
        } else {
            switch (a.jk_kind()) {  // an attribute the case does not set: its declared default
                case Kind::BOOL: ok = attrs.jk_add_bool(a.jk_bool()); break;
                case Kind::INT: ok = attrs.jk_add_int(a.jk_int()); break;
                case Kind::FLOAT: ok = attrs.jk_add_float(a.jk_float()); break;
                case Kind::STR: ok = attrs.jk_add_str(a.jk_str().c_str()); break;
                case Kind::LIST_INT: ok = attrs.jk_add_list_int(a.jk_list_int().data(), a.jk_list_int().size()); break;
                case Kind::LIST_FLOAT:
                    ok = attrs.jk_add_list_float(a.jk_list_float().data(), a.jk_list_float().size());
                    break;
                default: ok = attrs.jk_add_none(); break;
            }
        }
        if (!ok) {
            std::fprintf(stderr, "harness: attribute %s does not fit the runtime attribute table\n", a.jk_name().c_str());
            return false;
        }
    }
    return true;
}

// ---- one case: everything a single run does ----------------------------------------------------
int run_case(const std::string& case_dir, const std::string& out_dir, bool trace, bool hazards) {
    const CaseDesc desc = parse_case(case_dir + "/case.txt");
    const bool half = desc.dtype == "float16";
    const uint64_t elem = half ? 2 : 4;
    const ge::DataType dt = half ? ge::DT_FLOAT16 : ge::DT_FLOAT;

    // ---- tiling ----
    static fe::PlatFormInfos platform = jk_soc::platform();
    jk::g_platform_infos = &platform;
    const jk::SocParams soc = jk_soc::params();

    ops::OpDef* def = jk_op_add_create();
    const ops::TilingKernelFunc tiling_fn = def ? def->jk_aicore().jk_tiling() : nullptr;
    if (!tiling_fn) die(EXIT_TILING, "the operator registered with OP_ADD has no AICore().SetTiling function");

    static gert::RuntimeAttrs attrs;
    if (!fill_attrs(*def, desc, attrs)) return EXIT_TILING;
    static gert::TilingContext ctx;
    ctx.jk_set_node(jk_op_add_type(), jk_op_add_type());
    for (int i = 0; i < 3; ++i) ctx.jk_add_input(storage_shape(desc.rank[i], desc.shape[i]), dt);
    for (int i = 0; i < 2; ++i) ctx.jk_add_output(storage_shape(desc.rank[3 + i], desc.shape[3 + i]), dt);
    ctx.jk_set_attrs(&attrs);
    ctx.jk_set_platform(&platform);
    // The tiling bytes: a zero-filled mapping of their own, made read-only before the blocks run.
    void* tiling_map = mmap(nullptr, kTilingCapacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tiling_map == MAP_FAILED) die(EXIT_CRASH, "cannot map the tiling buffer: %s", std::strerror(errno));
    uint8_t* const tiling_bytes = static_cast<uint8_t*>(tiling_map);
    ctx.jk_bind_tiling(tiling_bytes, kTilingCapacity);

    ge::graphStatus status;
    try {
        status = tiling_fn(&ctx);
    } catch (const std::exception& exc) {
        die(EXIT_TILING, "the tiling function threw: %s", exc.what());
    } catch (...) {
        die(EXIT_TILING, "the tiling function threw");
    }
    if (status != ge::GRAPH_SUCCESS) die(EXIT_TILING, "the tiling function rejected the case (status %u)", status);
    const uint32_t block_dim = ctx.GetBlockDim();
    if (block_dim < 1 || block_dim > soc.vector_cores) {
        die(EXIT_TILING, "block_dim %u outside [1, %u] (the vector cores of %s)", block_dim, soc.vector_cores, soc.name);
    }
    const size_t tiling_size = ctx.GetRawTilingData()->GetDataSize();
    if (tiling_size > kTilingCapacity) {
        die(EXIT_TILING, "tiling data size %zu exceeds the capacity %zu", tiling_size, kTilingCapacity);
    }
    const uint64_t ws_bytes = ctx.jk_workspace_total();
    if (ws_bytes > kWorkspaceCap) {
        die(EXIT_TILING, "workspace of %llu bytes outside [0, %llu]", static_cast<unsigned long long>(ws_bytes),
            static_cast<unsigned long long>(kWorkspaceCap));
    }
    jk::g_tiling_key = ctx.GetTilingKey();
    if (mprotect(tiling_map, kTilingCapacity, PROT_READ) != 0) die(EXIT_CRASH, "cannot protect the tiling buffer");
    g_fault.tiling_lo = reinterpret_cast<uint64_t>(tiling_map);
    g_fault.tiling_hi = g_fault.tiling_lo + kTilingCapacity;

    // ---- buffers ----
    static Buffer bufs[B_COUNT];
    for (int b = 0; b < B_WS; ++b) {
        const uint64_t n = elements(desc.rank[b], desc.shape[b]);  // inputs 0..2, outputs 3..4
        if (n == 0) die(EXIT_CASE, "%s is too large", kBufferNames[b]);
        bufs[b].bytes = n * elem;
    }
    bufs[B_WS].bytes = ws_bytes;
    for (Buffer& buf : bufs) buf.data.assign(buf.bytes + 64, 0);
    for (int b = B_IN0; b <= B_IN2; ++b) load_input(case_dir, b, bufs[b]);
    fill_nan(bufs[B_OUT0], half);
    fill_nan(bufs[B_OUT1], half);
    std::memset(bufs[B_WS].data.data(), 0xff, bufs[B_WS].bytes);

    jk::g_engine = new jk::Engine(soc);
    jk::g_engine->check_hazards = hazards;
    for (int b = 0; b < B_COUNT; ++b) {
        bufs[b].fake = jk::g_engine->gm_register(kBufferNames[b], bufs[b].data.data(), bufs[b].bytes, b >= B_OUT0);
    }
    // Reserve the fake range (no access) so a raw dereference faults there and nowhere else.
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const Buffer& buf : bufs) {
        lo = std::min(lo, buf.fake);
        hi = std::max(hi, buf.fake + (buf.bytes + kMiB - 1) / kMiB * kMiB + kMiB);
    }
    // Slack on both sides, so a pointer computed off a GM base still lands in the range; small,
    // because the reservation counts against the sandbox's RLIMIT_AS like real memory.
    lo = (lo & ~(kMiB - 1)) - kGmSlack;
    hi += kGmSlack;
    void* want = reinterpret_cast<void*>(lo);
    void* got = mmap(want, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got != want) die(EXIT_GM_RANGE, "cannot reserve the fake GM range: %s", got == MAP_FAILED ? std::strerror(errno) : "moved");
    g_fault.lo = lo;
    g_fault.hi = hi;
    g_fault.buffers = bufs;
    std::snprintf(g_fault.misuse_path, sizeof g_fault.misuse_path, "%s/misuse.json", out_dir.c_str());
    install_fault_handler();

    // ---- blocks ----
    // Side by side (jk::run_blocks): one thread per block, one running at a time, in block order
    // within each SyncAll phase, so cores can pass data through GM across SyncAll.
    struct Blocks {
        const Buffer* bufs;
        uint8_t* tiling;
        bool crashed = false;
        std::string crash_text;
    } blocks{bufs, tiling_bytes};
    auto body = [](void* raw, uint32_t b) {
        Blocks& k = *static_cast<Blocks*>(raw);
        g_fault.block = static_cast<int32_t>(b);
        if (k.crashed) return;  // after a crash, blocks not yet started do not run
        auto gm = [&](int i) { return reinterpret_cast<uint8_t*>(k.bufs[i].fake); };
        try {
            confusion_mul_grad(gm(B_IN0), gm(B_IN1), gm(B_IN2), gm(B_OUT0), gm(B_OUT1), gm(B_WS), k.tiling);
        } catch (const jk::Misuse&) {
            throw;  // run_blocks records it (sticky) and ends this block
        } catch (const std::exception& exc) {
            if (!k.crashed) k.crash_text = exc.what();
            k.crashed = true;
        } catch (...) {
            if (!k.crashed) k.crash_text = "unknown exception";
            k.crashed = true;
        }
    };
    jk::run_blocks(*jk::g_engine, block_dim, body, &blocks);
    const bool crashed = blocks.crashed;
    const std::string crash_text = blocks.crash_text;
    g_fault.block = -1;

    if (const jk::MisuseRecord* m = jk::g_engine->first_misuse()) {
        write_file(out_dir + "/misuse.json", misuse_json(m->check, m->message, &m->file, m->line, m->block));
        std::fprintf(stderr, "harness: api_misuse %s at %s:%u: %s\n", m->check.c_str(), m->file.c_str(), m->line,
                     m->message.c_str());
        return EXIT_MISUSE;
    }
    if (crashed) die(EXIT_CRASH, "the kernel threw: %s", crash_text.c_str());

    write_output(out_dir, "output0", bufs[B_OUT0]);
    write_output(out_dir, "output1", bufs[B_OUT1]);
    write_file(out_dir + "/run.json", run_json(*jk::g_engine, desc, block_dim, ws_bytes, tiling_size));
    if (trace) write_trace(*jk::g_engine, out_dir + "/trace.json");
    std::printf("%s ok block_dim=%u cycles=%llu\n", desc.id.c_str(), block_dim,
                static_cast<unsigned long long>(jk::g_engine->total_cycles()));
    return EXIT_OK;
}

// ---- batch mode -----------------------------------------------------------------------------------
// What the parent notes of a case's files right after its child is gone, to tell at the end whether a
// later child changed them. ctime cannot be set by a process (the kernel stamps every write, truncate,
// chmod, link, rename or utimes with the current time), and the parent waits until the clock that
// stamps it is past every noted ctime before it starts the next child, so any later change shows.
struct FileMark {
    bool present = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    mode_t mode = 0;
    nlink_t links = 0;
    timespec mtime{}, ctime{};

    static FileMark of(const std::string& path) {
        FileMark m;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) return m;
        m.present = true;
        m.dev = st.st_dev, m.ino = st.st_ino, m.size = st.st_size, m.mode = st.st_mode, m.links = st.st_nlink;
        m.mtime = st.st_mtim, m.ctime = st.st_ctim;
        return m;
    }
    bool same(const FileMark& o) const {
        if (present != o.present) return false;
        return !present || (dev == o.dev && ino == o.ino && size == o.size && mode == o.mode && links == o.links &&
                            mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec &&
                            ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec);
    }
};

bool later(const timespec& a, const timespec& b) {
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

// Waits (at most ~2 s: a filesystem with whole-second times) until the coarse real-time clock, which
// stamps ctime, is past `t`; false if it did not get there.
bool clock_past(const timespec& t) {
    for (int i = 0; i < 2100; ++i) {
        timespec now;
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (later(now, t)) return true;
        const timespec ms{0, 1000000};
        nanosleep(&ms, nullptr);
    }
    return false;
}

// The files the host reads of a case that exited 0, hence the ones the parent watches.
const char* const kCaseFiles[] = {"output0.bin", "output1.bin", "run.json", "trace.json", "harness.stdout", "harness.stderr"};
constexpr int EXIT_UNCLEAN = 70;  // the parent could not make sure no process of a case was left

struct CaseSlot {
    std::string case_dir, out_dir;
    std::string state = "not_run";  // exit | signal | timeout | not_run | fork_failed
    int code = -1, sig = -1;
    double cpu = 0.0, wall = 0.0;
    std::vector<FileMark> marks;  // kCaseFiles, noted when the case's child exited 0
    bool intact = false;          // exit 0, and its files unchanged until the end of the batch
};

double seconds_since(const timespec& t0) {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec - t0.tv_sec) + static_cast<double>(t.tv_nsec - t0.tv_nsec) / 1e9;
}

// The pids of this process's living children, from /proc (the parent is single-threaded).
bool list_children(std::vector<pid_t>& out) {
    out.clear();
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(getpid()));
    FILE* f = std::fopen(path, "r");
    if (!f) return false;
    long pid;
    while (std::fscanf(f, "%ld", &pid) == 1) out.push_back(static_cast<pid_t>(pid));
    std::fclose(f);
    return true;
}

// Kills and reaps whatever a case's child left behind. The parent is a child subreaper, so every
// orphaned descendant becomes its child; "no child left" means no process of the case is left.
bool clear_leftovers() {
    std::vector<pid_t> pids;
    for (int round = 0; round < 1000; ++round) {
        while (waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        if (waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD) return true;
        if (!list_children(pids)) return false;
        for (pid_t p : pids) kill(p, SIGKILL);
        waitpid(-1, nullptr, 0);  // one of them ends (SIGKILL cannot be held off)
    }
    return false;
}

[[noreturn]] void run_child(const CaseSlot& slot, bool trace, bool hazards, int case_cpu, const sigset_t& mask) {
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    prctl(PR_SET_DUMPABLE, 1);  // as a single run is
    if (case_cpu > 0) {
        const rlimit cpu{static_cast<rlim_t>(case_cpu), static_cast<rlim_t>(case_cpu) + 1};  // as prlimit --cpu=N:N+1
        if (setrlimit(RLIMIT_CPU, &cpu) != 0) _exit(EXIT_CRASH);
    }
    const std::string names[2] = {slot.out_dir + "/harness.stdout", slot.out_dir + "/harness.stderr"};
    for (int i = 0; i < 2; ++i) {
        const int fd = open(names[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, i + 1) < 0) _exit(EXIT_OUTPUT);
        close(fd);
    }
    const int code = run_case(slot.case_dir, slot.out_dir, trace, hazards);
    std::exit(code);  // what returning from a single run's main does: flush stdio, run destructors
}

// Forks the case, waits for it (wall limit), clears what it left; false if that failed.
bool run_slot(CaseSlot& slot, bool trace, bool hazards, double case_wall, int case_cpu, const sigset_t& mask) {
    timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    std::fflush(nullptr);  // nothing buffered may be written twice
    const pid_t pid = fork();
    if (pid < 0) {
        slot.state = "fork_failed";
        return true;
    }
    if (pid == 0) run_child(slot, trace, hazards, case_cpu, mask);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    int status = 0;
    rusage ru{};
    bool timed_out = false;
    for (;;) {
        const pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) break;  // orphans of the case wait, as zombies, for clear_leftovers
        const double left = case_wall - seconds_since(t0);
        if (case_wall > 0 && left <= 0) {
            kill(pid, SIGKILL);
            while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
            }
            timed_out = true;
            break;
        }
        const double wait_s = case_wall > 0 ? std::min(left, 0.5) : 0.5;
        timespec ts{static_cast<time_t>(wait_s), static_cast<long>((wait_s - static_cast<double>(static_cast<time_t>(wait_s))) * 1e9)};
        sigtimedwait(&chld, nullptr, &ts);
    }
    slot.wall = seconds_since(t0);
    slot.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    if (!clear_leftovers()) return false;
    if (timed_out) {
        slot.state = "timeout";
    } else if (WIFEXITED(status)) {
        slot.state = "exit";
        slot.code = WEXITSTATUS(status);
    } else {
        slot.state = "signal";
        slot.sig = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    }
    if (slot.state == "exit" && slot.code == 0) {
        timespec newest{};
        for (const char* name : kCaseFiles) {
            slot.marks.push_back(FileMark::of(slot.out_dir + "/" + name));
            if (later(slot.marks.back().ctime, newest)) newest = slot.marks.back().ctime;
        }
        slot.intact = clock_past(newest);
    }
    return true;
}

// A case that hit a limit ends the batch: the cases after it are not started (the host runs the
// limit case alone, and the gating there decides about the rest).
bool hit_limit(const CaseSlot& s) {
    if (s.state == "timeout" || s.state == "fork_failed") return true;
    return s.state == "signal" && (s.sig == SIGXCPU || s.sig == SIGXFSZ || s.sig == SIGKILL || s.sig == SIGSYS);
}

std::string batch_json(const std::vector<CaseSlot>& slots) {
    std::string s = "{\"schema\": 1, \"cases\": [";
    for (size_t i = 0; i < slots.size(); ++i) {
        const CaseSlot& c = slots[i];
        s += i ? ", " : "";
        s += "{\"out\": " + json_str(c.out_dir) + ", \"state\": " + json_str(c.state) +
             ", \"code\": " + (c.code >= 0 ? std::to_string(c.code) : "null") +
             ", \"signal\": " + (c.sig >= 0 ? std::to_string(c.sig) : "null") + ", \"cpu_seconds\": " + fixed(c.cpu, 6) +
             ", \"wall_seconds\": " + fixed(c.wall, 6) + ", \"intact\": " + (c.intact ? "true" : "false") + "}";
    }
    return s + "]}";
}

int run_batch(std::vector<CaseSlot>& slots, bool trace, bool hazards, double case_wall, int case_cpu) {
    // Not dumpable: a child (same uid) cannot open /proc/<parent>/fd or /proc/<parent>/mem.
    if (prctl(PR_SET_DUMPABLE, 0) != 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        std::fprintf(stderr, "harness: cannot set up the batch parent: %s\n", std::strerror(errno));
        return EXIT_CRASH;
    }
    sigset_t chld, mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &mask);
    bool stop = false;
    for (CaseSlot& slot : slots) {
        if (stop) continue;
        if (!run_slot(slot, trace, hazards, case_wall, case_cpu, mask)) {
            std::fprintf(stderr, "harness: processes of a case are left; no report\n");
            return EXIT_UNCLEAN;
        }
        stop = hit_limit(slot);
    }
    for (CaseSlot& slot : slots) {  // a later child changed (or replaced) one of its files
        for (size_t f = 0; slot.intact && f < slot.marks.size(); ++f) {
            slot.intact = slot.marks[f].same(FileMark::of(slot.out_dir + "/" + kCaseFiles[f]));
        }
    }
    // Every child is gone: only now is anything reported, on the parent's own stdout (a child's
    // stdout and stderr are files in its out dir), as the last line. The host reads only that line.
    const std::string report = "\njk-batch " + batch_json(slots) + "\n";
    const size_t put = std::fwrite(report.data(), 1, report.size(), stdout);
    return std::fflush(stdout) == 0 && put == report.size() ? EXIT_OK : EXIT_OUTPUT;
}
}  // namespace

int main(int argc, char** argv) {
    const bool batch = argc > 1 && std::strcmp(argv[1], "--batch") == 0;
    bool trace = false;
    bool hazards = true;
    double case_wall = 0.0;
    int case_cpu = 0;
    std::vector<std::string> positional;
    for (int i = batch ? 2 : 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--trace") == 0) {
            trace = true;
        } else if (std::strcmp(argv[i], "--no-hazard-checks") == 0) {
            hazards = false;
        } else if (batch && std::strcmp(argv[i], "--case-wall") == 0 && i + 1 < argc) {
            case_wall = std::atof(argv[++i]);
        } else if (batch && std::strcmp(argv[i], "--case-cpu") == 0 && i + 1 < argc) {
            case_cpu = std::atoi(argv[++i]);
        } else if (std::strncmp(argv[i], "--", 2) == 0) {
            std::fprintf(stderr, "harness: unknown option %s\n", argv[i]);
            return EXIT_USAGE;
        } else {
            positional.emplace_back(argv[i]);
        }
    }
    if (!batch) {
        if (positional.size() != 2) {
            std::fprintf(stderr,
                         "usage: harness <case_dir> <out_dir> [--trace] [--no-hazard-checks]\n"
                         "       harness --batch [--trace] [--no-hazard-checks] [--case-wall S] [--case-cpu S] "
                         "<case_dir>:<out_dir> ...\n");
            return EXIT_USAGE;
        }
        return run_case(positional[0], positional[1], trace, hazards);
    }
    std::vector<CaseSlot> slots;
    for (const std::string& pair : positional) {
        const size_t colon = pair.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == pair.size()) {
            std::fprintf(stderr, "harness: --batch takes <case_dir>:<out_dir>, not %s\n", pair.c_str());
            return EXIT_USAGE;
        }
        CaseSlot slot;
        slot.case_dir = pair.substr(0, colon);
        slot.out_dir = pair.substr(colon + 1);
        slots.push_back(slot);
    }
    if (slots.empty()) {
        std::fprintf(stderr, "harness: --batch needs at least one <case_dir>:<out_dir>\n");
        return EXIT_USAGE;
    }
    const int code = run_batch(slots, trace, hazards, case_wall, case_cpu);
    // _exit, not return: static destructors (the team's among them) must not run in the parent,
    // where they could print after the report.
    std::fflush(nullptr);
    _exit(code);
}
