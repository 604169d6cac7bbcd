// A hostile kernel for the batch-mode tests: trusted test code, compiled natively and linked with the
// probe's host and the harness main. Team code could not reference fopen or open at all (the object
// check); this one plays a kernel that got past every check.
//
// JK_HOSTILE=spin: loops forever (the per-case wall limit). Otherwise, once per process: the second
// child of a batch overwrites the first case's output0.bin, writes a fake status file next to it,
// prints a fake batch report on its own stdout and tries to write one into the parent's stdout
// through /proc/<parent>/fd/1 (saying on stderr whether that opened). No child writes its outputs
// (they stay the harness's NaN fill), so every case exits 0. And a static object's destructor
// prints a fake report line: at exit of every process it runs in (the children; never the batch
// parent, which ends with _exit).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int next_child_index() {  // a counter in the sandbox's private /tmp
    int n = 0;
    if (FILE* f = std::fopen("/tmp/jk_hostile.count", "r")) {
        if (std::fscanf(f, "%d", &n) != 1) n = 0;
        std::fclose(f);
    }
    if (FILE* f = std::fopen("/tmp/jk_hostile.count", "w")) {
        std::fprintf(f, "%d", n + 1);
        std::fclose(f);
    }
    return n;
}

std::vector<std::string> out_dirs() {  // the parent's argv: <case_dir>:<out_dir> pairs
    std::vector<std::string> outs;
    FILE* f = std::fopen("/proc/self/cmdline", "rb");
    if (!f) return outs;
    std::string arg;
    for (int c; (c = std::fgetc(f)) != EOF;) {
        if (c != 0) {
            arg += static_cast<char>(c);
            continue;
        }
        const size_t colon = arg.find(':');
        if (arg.rfind("--", 0) != 0 && colon != std::string::npos) outs.push_back(arg.substr(colon + 1));
        arg.clear();
    }
    std::fclose(f);
    return outs;
}

void put(const std::string& path, const std::string& text) {
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
    }
}

struct FakeTail {
    ~FakeTail() { std::fputs("\njk-batch {\"schema\": 1, \"cases\": [], \"fake\": true}\n", stdout); }
};
FakeTail g_fake_tail;

}  // namespace

extern "C" void confusion_mul_grad(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*) {
    const char* mode = std::getenv("JK_HOSTILE");
    if (mode && std::strcmp(mode, "spin") == 0) {
        for (volatile unsigned long i = 0;; i = i + 1) {
        }
    }
    static bool done = false;  // blocks run one after another on threads of one process
    if (done) return;
    done = true;
    if (next_child_index() != 1) return;
    const std::vector<std::string> outs = out_dirs();
    if (outs.empty()) return;
    put(outs[0] + "/output0.bin", std::string(64, '\0'));
    put(outs[0] + "/status.json", "{\"state\": \"exit\", \"code\": 0, \"intact\": true}\n");
    std::string fake = "\njk-batch {\"schema\": 1, \"cases\": [";
    for (size_t i = 0; i < outs.size(); ++i) {
        fake += (i ? ", " : "") + std::string("{\"out\": \"") + outs[i] +
                "\", \"state\": \"exit\", \"code\": 0, \"signal\": null, \"cpu_seconds\": 0.1, "
                "\"wall_seconds\": 0.1, \"intact\": true, \"fake\": true}";
    }
    fake += "]}\n";
    std::fputs(fake.c_str(), stdout);
    const std::string parent_out = "/proc/" + std::to_string(getppid()) + "/fd/1";
    const int fd = open(parent_out.c_str(), O_WRONLY);
    std::fprintf(stderr, "hostile: %s: %s\n", parent_out.c_str(), fd < 0 ? std::strerror(errno) : "opened");
    if (fd >= 0) {
        (void)!write(fd, fake.data(), fake.size());
        close(fd);
    }
}
