// Clean-room TilingData definition macros (host and kernel side share this header).
//
// Documented behaviour (atlasascendc_api_07_1005, "TilingData结构定义"): BEGIN_TILING_DATA_DEF(class)
// opens a class; TILING_DATA_FIELD_DEF(type, name), TILING_DATA_FIELD_DEF_ARR(type, n, name) and
// TILING_DATA_FIELD_DEF_STRUCT(struct_type, name) add fields with set_<name>/get_<name> accessors;
// END_TILING_DATA_DEF closes it; SaveToBuffer serialises, GetDataSize gives the length;
// REGISTER_TILING_DATA_CLASS(op_type, class) ties the class to an operator type.
//
// Layout rule (ours, documented here and in docs): the class IS the serialised layout. Fields sit in
// declaration order at their natural C++ alignment (x86-64 SysV, as g++ lays out a standard-layout
// class); GetDataSize() is sizeof(class); SaveToBuffer copies those bytes. The kernel side reads the
// same class, so host and kernel agree by construction (one definition, both translation units).
// Field types are the documented ones: int8..uint64 and float; struct fields must themselves be
// BEGIN_TILING_DATA_DEF classes (also documented).
//
// Nothing here has a dynamic initialiser or touches a global: the header is included into user code.
#ifndef JK_REGISTER_TILINGDATA_BASE_H
#define JK_REGISTER_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "jk_ascendc/tiling_kernel.h"

#define BEGIN_TILING_DATA_DEF(class_name)                                                      \
    class class_name {                                                                         \
    public:                                                                                    \
        using JkSelf = class_name;                                                             \
        /* Marker (no storage): TILING_DATA_FIELD_DEF_STRUCT accepts only these classes. */    \
        static constexpr bool kJkTilingData = true;                                            \
        /* Serialise: copy the class bytes (the layout rule above); too small a buffer is left \
           untouched so the harness sees a data size larger than what was written. */         \
        void SaveToBuffer(void* buf, size_t capacity) const                                    \
        {                                                                                      \
            if (buf != nullptr && capacity >= sizeof(JkSelf)) {                                \
                std::memcpy(buf, static_cast<const void*>(this), sizeof(JkSelf));              \
            }                                                                                  \
        }                                                                                      \
        size_t GetDataSize() const { return sizeof(JkSelf); }                                  \
        void SetDataPtr(void*) {}

#define TILING_DATA_FIELD_DEF(data_type, field_name)                                           \
    data_type field_name = data_type();                                                        \
    void set_##field_name(data_type jk_value) { field_name = jk_value; }                       \
    data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                              \
    arr_type field_name[arr_size] = {};                                                        \
    void set_##field_name(const arr_type* jk_values)                                           \
    {                                                                                          \
        if (jk_values != nullptr) {                                                            \
            std::memcpy(field_name, jk_values, sizeof(field_name));                            \
        }                                                                                      \
    }                                                                                          \
    arr_type* get_##field_name() { return field_name; }                                        \
    const arr_type* get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name)                                  \
    static_assert(struct_type::kJkTilingData,                                                  \
                  "TILING_DATA_FIELD_DEF_STRUCT needs a BEGIN_TILING_DATA_DEF class");         \
    struct_type field_name;                                                                    \
    void set_##field_name(const struct_type& jk_value) { field_name = jk_value; }              \
    struct_type& get_##field_name() { return field_name; }                                     \
    const struct_type& get_##field_name() const { return field_name; }

#define END_TILING_DATA_DEF }

// REGISTER_TILING_DATA_CLASS(op_type, class): an alias the kernel side finds by op type
// (GET_TILING_DATA uses JK_OP_TYPE). No object, no registration at start-up.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) using JkTilingDataOf_##op_type = class_name;

#endif  // JK_REGISTER_TILINGDATA_BASE_H
