// Round-trip driver: host save into a 0xAB-filled buffer, dump the bytes, kernel load.
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" size_t rt_save(void* buf, size_t capacity);
extern "C" void rt_load(uint8_t* tiling);

int main()
{
    alignas(8) uint8_t buf[64];
    std::memset(buf, 0xAB, sizeof buf);
    const size_t small = rt_save(buf, 4);  // too small: SaveToBuffer must leave it untouched
    std::printf("{\"small_size\": %zu, \"small_untouched\": %s}\n", small, buf[0] == 0xAB ? "true" : "false");
    const size_t size = rt_save(buf, sizeof buf);
    std::printf("{\"size\": %zu, \"hex\": \"", size);
    for (size_t i = 0; i < sizeof buf; ++i) {
        std::printf("%02x", buf[i]);
    }
    std::printf("\"}\n");
    rt_load(buf);
    return 0;
}
