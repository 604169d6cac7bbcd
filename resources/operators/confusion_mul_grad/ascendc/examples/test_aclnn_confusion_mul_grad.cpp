// test_aclnn_confusion_mul_grad <case_dir> <out_dir>
// Reads case.txt and input{0,1,2}.bin (raw little-endian), runs aclnnConfusionMulGrad on device 0,
// writes output0.bin and output1.bin into out_dir. Exit 0 on success, 2 usage, 3 bad case, 4 ACL error.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn_confusion_mul_grad.h"

#define CHECK_ACL(expr)                                                          \
    do {                                                                         \
        auto _ret = (expr);                                                      \
        if (_ret != 0) {                                                         \
            std::fprintf(stderr, "%s failed: %d\n", #expr, static_cast<int>(_ret)); \
            return 4;                                                            \
        }                                                                        \
    } while (0)

struct Case {
    std::string dtype;
    std::vector<std::vector<int64_t>> inputs, outputs;
    std::vector<int64_t> axes;
    bool keepDims = false;
};

static std::vector<int64_t> ReadShape(std::istringstream &line)
{
    int64_t rank = 0;
    line >> rank;
    std::vector<int64_t> shape(rank);
    for (auto &extent : shape) line >> extent;
    return shape;
}

static bool ReadCase(const std::string &dir, Case &c)
{
    std::ifstream file(dir + "/case.txt");
    std::string text;
    while (std::getline(file, text)) {
        std::istringstream line(text);
        std::string key;
        line >> key;
        if (key == "dtype") line >> c.dtype;
        else if (key.rfind("input", 0) == 0) c.inputs.push_back(ReadShape(line));
        else if (key.rfind("output", 0) == 0) c.outputs.push_back(ReadShape(line));
        else if (key == "axes") c.axes = ReadShape(line);
        else if (key == "keep_dims") { int v = 0; line >> v; c.keepDims = v != 0; }
    }
    return c.inputs.size() == 3 && c.outputs.size() == 2 && (c.dtype == "float32" || c.dtype == "float16");
}

static int64_t Elements(const std::vector<int64_t> &shape)
{
    int64_t n = 1;
    for (auto extent : shape) n *= extent;
    return n;
}

static int CreateTensor(const std::string &path, const std::vector<int64_t> &shape, aclDataType dtype, size_t item,
                        void **device, aclTensor **tensor)
{
    size_t bytes = static_cast<size_t>(Elements(shape)) * item;
    std::vector<char> host(bytes);
    if (!path.empty()) {
        std::ifstream in(path, std::ios::binary);
        in.read(host.data(), static_cast<std::streamsize>(bytes));
        if (static_cast<size_t>(in.gcount()) != bytes) return 3;
    }
    CHECK_ACL(aclrtMalloc(device, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    if (bytes) CHECK_ACL(aclrtMemcpy(*device, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = shape[i + 1] * strides[i + 1];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, ACL_FORMAT_ND, shape.data(),
                              shape.size(), *device);
    return 0;
}

static int Dump(const std::string &path, void *device, size_t bytes)
{
    std::vector<char> host(bytes);
    if (bytes) CHECK_ACL(aclrtMemcpy(host.data(), bytes, device, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    std::ofstream out(path, std::ios::binary);
    out.write(host.data(), static_cast<std::streamsize>(bytes));
    return out ? 0 : 4;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <case_dir> <out_dir>\n", argv[0]);
        return 2;
    }
    const std::string caseDir = argv[1], outDir = argv[2];
    Case c;
    if (!ReadCase(caseDir, c)) return 3;
    const aclDataType dtype = c.dtype == "float32" ? ACL_FLOAT : ACL_FLOAT16;
    const size_t item = c.dtype == "float32" ? 4 : 2;

    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));

    void *dev[5] = {};
    aclTensor *t[5] = {};
    for (int i = 0; i < 3; ++i) {
        int rc = CreateTensor(caseDir + "/input" + std::to_string(i) + ".bin", c.inputs[i], dtype, item, &dev[i], &t[i]);
        if (rc) return rc;
    }
    for (int i = 0; i < 2; ++i) {
        int rc = CreateTensor("", c.outputs[i], dtype, item, &dev[3 + i], &t[3 + i]);
        if (rc) return rc;
    }
    aclIntArray *axes = aclCreateIntArray(c.axes.data(), c.axes.size());

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    CHECK_ACL(aclnnConfusionMulGradGetWorkspaceSize(t[0], t[1], t[2], axes, c.keepDims, t[3], t[4], &workspaceSize,
                                                    &executor));
    void *workspace = nullptr;
    if (workspaceSize) CHECK_ACL(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclnnConfusionMulGrad(workspace, workspaceSize, executor, stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));

    for (int i = 0; i < 2; ++i) {
        int rc = Dump(outDir + "/output" + std::to_string(i) + ".bin", dev[3 + i],
                      static_cast<size_t>(Elements(c.outputs[i])) * item);
        if (rc) return rc;
    }
    aclDestroyIntArray(axes);
    for (int i = 0; i < 5; ++i) {
        aclDestroyTensor(t[i]);
        aclrtFree(dev[i]);
    }
    if (workspace) aclrtFree(workspace);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
