// Host-side operator API, clean room: what an msopgen op_host/*.cpp needs to define its operator
// and its tiling function. Names and behaviour from the public docs (page ids beside each part);
// our own code. Everything is inline or a template: no object here has a dynamic initialiser.
//
//   ge::graphStatus, GRAPH_SUCCESS/GRAPH_FAILED, ge::DataType, ge::Format
//   gert::Shape (GetDimNum atlasopapi_07_00157, SetDimNum 07_00158, AppendDim 07_00161: an append
//   past the maximum rank does nothing), gert::StorageShape, gert::Tensor,
//   gert::CompileTimeTensorDesc, gert::ContinuousVector / TypedContinuousVector,
//   gert::RuntimeAttrs (atlasopapi_07_00551), gert::TilingData, gert::TilingContext
//   (atlasopapi_07_00555), gert::InferShapeContext, gert::InferDataTypeContext
//   ops::OpDef builder (Input/Output/Attr/SetInferShape/SetInferDataType/AICore().SetTiling/AddConfig)
//   and OP_ADD(OpType), as the operator prototype guide shows them (atlas_ascendc_10_0062: a class
//   derived from OpDef, registered with OP_ADD and the class name); OP_ADD here registers the
//   operator for the harness (see below).
//
// OP_ADD and the harness: instead of a start-up registration object (which would put an
// .init_array entry into the user's host object), OP_ADD defines two extern "C" functions with fixed
// names, jk_op_add_create() and jk_op_add_type(); the harness links against them. One OP_ADD per
// host object (a second one is a duplicate-symbol link error, which is the honest outcome).
#ifndef JK_REGISTER_OP_DEF_REGISTRY_H
#define JK_REGISTER_OP_DEF_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "jk_ascendc/host_platform.h"

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFu;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649u;
using Status = uint32_t;
constexpr Status SUCCESS = 0;
constexpr Status FAILED = 0xFFFFFFFFu;

// Names as documented for ge::DataType; the numeric values are ours (user code must not rely on them).
enum DataType {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
};

// ge::GetSizeByDataType: bytes of one element (-1 for an unknown type).
inline int GetSizeByDataType(DataType dt)
{
    switch (dt) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
        default: return -1;
    }
}

enum Format {
    FORMAT_NCHW = 0,
    FORMAT_NHWC = 1,
    FORMAT_ND = 2,
    FORMAT_NC1HWC0 = 3,
    FORMAT_FRACTAL_Z = 4,
    FORMAT_FRACTAL_NZ = 29,
    FORMAT_RESERVED = 40,
};
}  // namespace ge

namespace gert {

// gert::Shape: dims in a fixed array (no allocation). GetShapeSize of a scalar (0 dims) is 1.
class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    static constexpr int64_t kInvalidDimValue = INT64_MIN;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims)
    {
        for (int64_t d : dims) {
            AppendDim(d);
        }
    }
    size_t GetDimNum() const { return dim_num_; }
    void SetDimNum(size_t num) { dim_num_ = num > kMaxDimNum ? kMaxDimNum : num; }
    int64_t GetDim(size_t idx) const { return idx < dim_num_ ? dims_[idx] : kInvalidDimValue; }
    void SetDim(size_t idx, int64_t value)
    {
        if (idx < dim_num_) {
            dims_[idx] = value;
        }
    }
    Shape& AppendDim(int64_t value)
    {
        if (dim_num_ < kMaxDimNum) {
            dims_[dim_num_++] = value;
        }
        return *this;
    }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (size_t i = 0; i < dim_num_; ++i) {
            if (dims_[i] < 0) {
                return -1;
            }
            n *= dims_[i];
        }
        return n;
    }
    bool IsScalar() const { return dim_num_ == 0; }
    void SetScalar() { dim_num_ = 0; }
    const int64_t& operator[](size_t idx) const { return dims_[idx < kMaxDimNum ? idx : 0]; }
    int64_t& operator[](size_t idx) { return dims_[idx < kMaxDimNum ? idx : 0]; }
    bool operator==(const Shape& other) const
    {
        if (dim_num_ != other.dim_num_) {
            return false;
        }
        for (size_t i = 0; i < dim_num_; ++i) {
            if (dims_[i] != other.dims_[i]) {
                return false;
            }
        }
        return true;
    }
    bool operator!=(const Shape& other) const { return !(*this == other); }

private:
    size_t dim_num_ = 0;
    int64_t dims_[kMaxDimNum] = {};
};

// gert::StorageShape: the origin (logical) and storage (runtime layout) shapes; equal for ND.
class StorageShape {
public:
    StorageShape() = default;
    StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
        : origin_(origin), storage_(storage)
    {
    }
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableStorageShape() { return storage_; }
    bool operator==(const StorageShape& o) const { return origin_ == o.origin_ && storage_ == o.storage_; }

private:
    Shape origin_;
    Shape storage_;
};

// gert::ContinuousVector / TypedContinuousVector<T>: a size, a capacity and the elements inline.
class ContinuousVector {
public:
    static constexpr size_t kCapacityBytes = 64 * 8;
    size_t GetSize() const { return size_; }
    size_t GetCapacity() const { return capacity_; }
    const void* GetData() const { return data_; }
    void* MutableData() { return data_; }
    ge::graphStatus SetSize(size_t size)
    {
        if (size > capacity_) {
            return ge::GRAPH_FAILED;
        }
        size_ = size;
        return ge::GRAPH_SUCCESS;
    }
    void jk_set_capacity(size_t capacity) { capacity_ = capacity; }

protected:
    size_t capacity_ = 0;
    size_t size_ = 0;
    alignas(8) unsigned char data_[kCapacityBytes] = {};
};

template <typename T>
class TypedContinuousVector : public ContinuousVector {
public:
    TypedContinuousVector() { capacity_ = kCapacityBytes / sizeof(T); }
    const T* GetData() const { return reinterpret_cast<const T*>(data_); }
    T* MutableData() { return reinterpret_cast<T*>(data_); }
    bool jk_assign(const T* values, size_t n)
    {
        if (n > capacity_) {
            return false;
        }
        if (n > 0) {
            std::memcpy(data_, values, n * sizeof(T));
        }
        size_ = n;
        return true;
    }
};

// gert::Tensor at tiling time: shape and dtype only; no input values (value-depend inputs are not
// modelled, so GetData returns nullptr).
class Tensor {
public:
    const StorageShape& GetShape() const { return shape_; }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    template <typename T>
    const T* GetData() const
    {
        return nullptr;
    }
    const void* GetAddr() const { return nullptr; }
    void jk_set(const StorageShape& shape, ge::DataType dtype)
    {
        shape_ = shape;
        dtype_ = dtype;
    }

private:
    StorageShape shape_;
    ge::DataType dtype_ = ge::DT_UNDEFINED;
};

// gert::CompileTimeTensorDesc (TilingContext::GetInputDesc): dtype and formats of an input/output.
class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
    void jk_set(ge::DataType dtype) { dtype_ = dtype; }

private:
    ge::DataType dtype_ = ge::DT_UNDEFINED;
};

// gert::RuntimeAttrs (atlasopapi_07_00551): attributes by index in the IR (OpDef) declaration order.
class RuntimeAttrs {
public:
    static constexpr size_t kMaxAttrs = 16;
    enum class Kind : uint8_t { NONE, INT, FLOAT, BOOL, STR, LIST_INT, LIST_FLOAT };

    template <typename T>
    const T* GetAttrPointer(size_t index) const
    {
        if (index >= num_) {
            return nullptr;
        }
        const Value& v = values_[index];
        if constexpr (std::is_same_v<T, int64_t>) {
            return v.kind == Kind::INT ? &v.i : nullptr;
        } else if constexpr (std::is_same_v<T, bool>) {
            return v.kind == Kind::BOOL ? &v.b : nullptr;
        } else if constexpr (std::is_same_v<T, float>) {
            return v.kind == Kind::FLOAT ? &v.f : nullptr;
        } else if constexpr (std::is_same_v<T, char>) {
            return v.kind == Kind::STR ? v.str : nullptr;
        } else if constexpr (std::is_same_v<T, TypedContinuousVector<int64_t>>) {
            return v.kind == Kind::LIST_INT ? &v.list_int : nullptr;
        } else if constexpr (std::is_same_v<T, TypedContinuousVector<float>>) {
            return v.kind == Kind::LIST_FLOAT ? &v.list_float : nullptr;
        } else if constexpr (std::is_same_v<T, ContinuousVector>) {
            return v.kind == Kind::LIST_INT     ? static_cast<const ContinuousVector*>(&v.list_int)
                   : v.kind == Kind::LIST_FLOAT ? static_cast<const ContinuousVector*>(&v.list_float)
                                                : nullptr;
        } else {
            static_assert(sizeof(T) == 0, "GetAttrPointer: attribute type not modelled");
            return nullptr;
        }
    }
    const int64_t* GetInt(const size_t index) const { return GetAttrPointer<int64_t>(index); }
    const bool* GetBool(const size_t index) const { return GetAttrPointer<bool>(index); }
    const float* GetFloat(const size_t index) const { return GetAttrPointer<float>(index); }
    const char* GetStr(const size_t index) const { return GetAttrPointer<char>(index); }
    const TypedContinuousVector<int64_t>* GetListInt(const size_t index) const
    {
        return GetAttrPointer<TypedContinuousVector<int64_t>>(index);
    }
    const TypedContinuousVector<float>* GetListFloat(const size_t index) const
    {
        return GetAttrPointer<TypedContinuousVector<float>>(index);
    }
    size_t GetAttrNum() const { return num_; }

    // Harness side: append attributes in declaration order.
    bool jk_add_int(int64_t value) { return add(Kind::INT, [&](Value& v) { v.i = value; }); }
    bool jk_add_bool(bool value) { return add(Kind::BOOL, [&](Value& v) { v.b = value; }); }
    bool jk_add_float(float value) { return add(Kind::FLOAT, [&](Value& v) { v.f = value; }); }
    bool jk_add_str(const char* value)
    {
        return add(Kind::STR, [&](Value& v) {
            std::strncpy(v.str, value != nullptr ? value : "", sizeof(v.str) - 1);
        });
    }
    bool jk_add_list_int(const int64_t* values, size_t n)
    {
        bool ok = true;
        bool added = add(Kind::LIST_INT, [&](Value& v) { ok = v.list_int.jk_assign(values, n); });
        return added && ok;
    }
    bool jk_add_list_float(const float* values, size_t n)
    {
        bool ok = true;
        bool added = add(Kind::LIST_FLOAT, [&](Value& v) { ok = v.list_float.jk_assign(values, n); });
        return added && ok;
    }
    bool jk_add_none() { return add(Kind::NONE, [](Value&) {}); }

private:
    struct Value {
        Kind kind = Kind::NONE;
        bool b = false;
        float f = 0.0f;
        int64_t i = 0;
        char str[256] = {};
        TypedContinuousVector<int64_t> list_int;
        TypedContinuousVector<float> list_float;
    };
    template <typename F>
    bool add(Kind kind, F fill)
    {
        if (num_ >= kMaxAttrs) {
            return false;
        }
        Value& v = values_[num_++];
        v.kind = kind;
        fill(v);
        return true;
    }
    size_t num_ = 0;
    Value values_[kMaxAttrs];
};

// gert::TilingData: the raw tiling buffer (capacity fixed by the harness).
class TilingData {
public:
    size_t GetCapacity() const { return capacity_; }
    size_t GetDataSize() const { return data_size_; }
    void* GetData() { return data_; }
    const void* GetData() const { return data_; }
    void SetDataSize(size_t size) { data_size_ = size; }  // checked against capacity by the harness
    template <typename T>
    ge::graphStatus Append(const T& value)
    {
        if (data_size_ > capacity_ || capacity_ - data_size_ < sizeof(T)) {
            return ge::GRAPH_FAILED;
        }
        std::memcpy(static_cast<unsigned char*>(data_) + data_size_, &value, sizeof(T));
        data_size_ += sizeof(T);
        return ge::GRAPH_SUCCESS;
    }
    void jk_bind(void* data, size_t capacity)
    {
        data_ = data;
        capacity_ = capacity;
        data_size_ = 0;
    }

private:
    void* data_ = nullptr;
    size_t capacity_ = 0;
    size_t data_size_ = 0;
};

// gert::TilingContext (atlasopapi_07_00555): what the tiling function reads and writes.
class TilingContext {
public:
    static constexpr size_t kMaxIo = 16;
    static constexpr size_t kMaxWorkspaces = 16;

    const StorageShape* GetInputShape(const size_t index) const
    {
        return index < input_num_ ? &input_tensors_[index].GetShape() : nullptr;
    }
    const StorageShape* GetOptionalInputShape(const size_t ir_index) const { return GetInputShape(ir_index); }
    const StorageShape* GetRequiredInputShape(const size_t ir_index) const { return GetInputShape(ir_index); }
    const StorageShape* GetDynamicInputShape(const size_t ir_index, const size_t relative_index) const
    {
        return relative_index == 0 ? GetInputShape(ir_index) : nullptr;
    }
    const Tensor* GetInputTensor(const size_t index) const
    {
        return index < input_num_ ? &input_tensors_[index] : nullptr;
    }
    const Tensor* GetOptionalInputTensor(const size_t ir_index) const { return GetInputTensor(ir_index); }
    const Tensor* GetRequiredInputTensor(const size_t ir_index) const { return GetInputTensor(ir_index); }
    const CompileTimeTensorDesc* GetInputDesc(const size_t index) const
    {
        return index < input_num_ ? &input_descs_[index] : nullptr;
    }
    const CompileTimeTensorDesc* GetOptionalInputDesc(const size_t ir_index) const { return GetInputDesc(ir_index); }
    const CompileTimeTensorDesc* GetRequiredInputDesc(const size_t ir_index) const { return GetInputDesc(ir_index); }
    const StorageShape* GetOutputShape(const size_t index) const
    {
        return index < output_num_ ? &output_shapes_[index] : nullptr;
    }
    const CompileTimeTensorDesc* GetOutputDesc(const size_t index) const
    {
        return index < output_num_ ? &output_descs_[index] : nullptr;
    }
    size_t GetComputeNodeInputNum() const { return input_num_; }
    size_t GetComputeNodeOutputNum() const { return output_num_; }
    const RuntimeAttrs* GetAttrs() const { return attrs_; }
    const char* GetNodeName() const { return node_name_; }
    const char* GetNodeType() const { return node_type_; }

    ge::graphStatus SetBlockDim(const uint32_t block_dim) { return stored(block_dim_, block_dim); }
    uint32_t GetBlockDim() const { return block_dim_; }
    ge::graphStatus SetTilingKey(const uint64_t tiling_key) { return stored(tiling_key_, tiling_key); }
    uint64_t GetTilingKey() const { return tiling_key_; }
    ge::graphStatus SetTilingCond(int32_t cond) { return stored(tiling_cond_, cond); }
    int32_t GetTilingCond() const { return tiling_cond_; }
    ge::graphStatus SetNeedAtomic(const bool atomic) { return stored(need_atomic_, atomic); }
    bool NeedAtomic() const { return need_atomic_; }
    ge::graphStatus SetScheduleMode(const uint32_t mode) { return stored(schedule_mode_, mode); }
    uint32_t GetScheduleMode() const { return schedule_mode_; }
    ge::graphStatus SetLocalMemorySize(const uint32_t size) { return stored(local_memory_size_, size); }
    uint32_t GetLocalMemorySize() const { return local_memory_size_; }
    int32_t GetDeterministic() const { return 1; }

    TilingData* GetRawTilingData() { return &raw_tiling_; }
    template <typename T>
    T* GetTilingData()
    {
        return raw_tiling_.GetCapacity() >= sizeof(T) ? static_cast<T*>(raw_tiling_.GetData()) : nullptr;
    }
    // GetWorkspaceSizes(n): n entries the tiling fills; the harness sums what was asked for.
    size_t* GetWorkspaceSizes(const size_t workspace_count)
    {
        if (workspace_count > kMaxWorkspaces) {
            return nullptr;
        }
        if (workspace_count > workspace_num_) {
            workspace_num_ = workspace_count;
        }
        return workspace_sizes_;
    }
    size_t GetWorkspaceNum() const { return workspace_num_; }
    fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }
    template <typename T>
    const T* GetCompileInfo() const
    {
        return nullptr;  // TilingParse / compile info is not modelled
    }

    // Harness side.
    void jk_set_node(const char* name, const char* type)
    {
        node_name_ = name;
        node_type_ = type;
    }
    bool jk_add_input(const StorageShape& shape, ge::DataType dtype)
    {
        if (input_num_ >= kMaxIo) {
            return false;
        }
        input_tensors_[input_num_].jk_set(shape, dtype);
        input_descs_[input_num_].jk_set(dtype);
        ++input_num_;
        return true;
    }
    bool jk_add_output(const StorageShape& shape, ge::DataType dtype)
    {
        if (output_num_ >= kMaxIo) {
            return false;
        }
        output_shapes_[output_num_] = shape;
        output_descs_[output_num_].jk_set(dtype);
        ++output_num_;
        return true;
    }
    void jk_set_attrs(const RuntimeAttrs* attrs) { attrs_ = attrs; }
    void jk_set_platform(fe::PlatFormInfos* platform) { platform_ = platform; }
    void jk_bind_tiling(void* data, size_t capacity) { raw_tiling_.jk_bind(data, capacity); }
    size_t jk_workspace_total() const
    {
        size_t total = 0;
        for (size_t i = 0; i < workspace_num_; ++i) {
            if (workspace_sizes_[i] > SIZE_MAX - total) {
                return SIZE_MAX;
            }
            total += workspace_sizes_[i];
        }
        return total;
    }

private:
    template <typename T>
    static ge::graphStatus stored(T& field, T value)
    {
        field = value;
        return ge::GRAPH_SUCCESS;
    }
    const char* node_name_ = "";
    const char* node_type_ = "";
    size_t input_num_ = 0;
    size_t output_num_ = 0;
    Tensor input_tensors_[kMaxIo];
    CompileTimeTensorDesc input_descs_[kMaxIo];
    StorageShape output_shapes_[kMaxIo];
    CompileTimeTensorDesc output_descs_[kMaxIo];
    const RuntimeAttrs* attrs_ = nullptr;
    uint32_t block_dim_ = 0;
    uint64_t tiling_key_ = 0;
    int32_t tiling_cond_ = 0;
    bool need_atomic_ = false;
    uint32_t schedule_mode_ = 0;
    uint32_t local_memory_size_ = 0;
    TilingData raw_tiling_;
    size_t workspace_num_ = 0;
    size_t workspace_sizes_[kMaxWorkspaces] = {};
    fe::PlatFormInfos* platform_ = nullptr;
};

// gert::InferShapeContext: input shapes in, output shapes out (the harness does not call it; the
// case file fixes output shapes, but the template's InferShape must compile).
class InferShapeContext {
public:
    static constexpr size_t kMaxIo = 16;
    const Shape* GetInputShape(const size_t index) const { return index < kMaxIo ? &inputs_[index] : nullptr; }
    const Shape* GetOptionalInputShape(const size_t ir_index) const { return GetInputShape(ir_index); }
    const Shape* GetRequiredInputShape(const size_t ir_index) const { return GetInputShape(ir_index); }
    Shape* GetOutputShape(const size_t index) { return index < kMaxIo ? &outputs_[index] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return attrs_; }
    const char* GetNodeName() const { return ""; }

private:
    Shape inputs_[kMaxIo];
    Shape outputs_[kMaxIo];
    const RuntimeAttrs* attrs_ = nullptr;
};

// gert::InferDataTypeContext: input dtypes in, output dtypes out (not called by the harness).
class InferDataTypeContext {
public:
    static constexpr size_t kMaxIo = 16;
    ge::DataType GetInputDataType(const size_t index) const { return index < kMaxIo ? in_[index] : ge::DT_UNDEFINED; }
    ge::DataType GetOptionalInputDataType(const size_t ir_index) const { return GetInputDataType(ir_index); }
    ge::DataType GetRequiredInputDataType(const size_t ir_index) const { return GetInputDataType(ir_index); }
    ge::DataType GetOutputDataType(const size_t index) const { return index < kMaxIo ? out_[index] : ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(const size_t index, const ge::DataType dtype)
    {
        if (index >= kMaxIo) {
            return ge::GRAPH_FAILED;
        }
        out_[index] = dtype;
        return ge::GRAPH_SUCCESS;
    }
    const RuntimeAttrs* GetAttrs() const { return nullptr; }

private:
    ge::DataType in_[kMaxIo] = {};
    ge::DataType out_[kMaxIo] = {};
};

}  // namespace gert

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

using TilingKernelFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeKernelFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeKernelFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);

// One input or output of the IR definition.
class OpParamDef {
public:
    explicit OpParamDef(const char* name) : name_(name != nullptr ? name : "") {}
    OpParamDef& ParamType(Option type)
    {
        param_type_ = type;
        return *this;
    }
    OpParamDef& DataType(std::vector<ge::DataType> types)
    {
        data_types_ = std::move(types);
        return *this;
    }
    OpParamDef& DataTypeList(std::vector<ge::DataType> types) { return DataType(std::move(types)); }
    OpParamDef& Format(std::vector<ge::Format> formats)
    {
        formats_ = std::move(formats);
        return *this;
    }
    OpParamDef& FormatList(std::vector<ge::Format> formats) { return Format(std::move(formats)); }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format> formats)
    {
        unknown_shape_formats_ = std::move(formats);
        return *this;
    }
    OpParamDef& ValueDepend(Option) { return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& Scalar() { return *this; }
    OpParamDef& ScalarList() { return *this; }

    const std::string& jk_name() const { return name_; }
    Option jk_param_type() const { return param_type_; }
    const std::vector<ge::DataType>& jk_data_types() const { return data_types_; }

private:
    std::string name_;
    Option param_type_ = REQUIRED;
    std::vector<ge::DataType> data_types_;
    std::vector<ge::Format> formats_;
    std::vector<ge::Format> unknown_shape_formats_;
};

// One attribute of the IR definition: its type (set by the typed call) and default value.
class OpAttrDef {
public:
    enum class Kind : uint8_t { UNSET, BOOL, FLOAT, INT, STR, LIST_BOOL, LIST_FLOAT, LIST_INT };

    explicit OpAttrDef(const char* name) : name_(name != nullptr ? name : "") {}
    OpAttrDef& AttrType(Option type)
    {
        attr_type_ = type;
        return *this;
    }
    OpAttrDef& Bool() { return set(Kind::BOOL); }
    OpAttrDef& Bool(bool value)
    {
        bool_ = value;
        return set(Kind::BOOL);
    }
    OpAttrDef& Float() { return set(Kind::FLOAT); }
    OpAttrDef& Float(float value)
    {
        float_ = value;
        return set(Kind::FLOAT);
    }
    OpAttrDef& Int() { return set(Kind::INT); }
    OpAttrDef& Int(int64_t value)
    {
        int_ = value;
        return set(Kind::INT);
    }
    OpAttrDef& String() { return set(Kind::STR); }
    OpAttrDef& String(const char* value)
    {
        str_ = value != nullptr ? value : "";
        return set(Kind::STR);
    }
    OpAttrDef& ListBool() { return set(Kind::LIST_BOOL); }
    OpAttrDef& ListBool(std::vector<bool>) { return set(Kind::LIST_BOOL); }
    OpAttrDef& ListFloat() { return set(Kind::LIST_FLOAT); }
    OpAttrDef& ListFloat(std::vector<float> value)
    {
        list_float_ = std::move(value);
        return set(Kind::LIST_FLOAT);
    }
    OpAttrDef& ListInt() { return set(Kind::LIST_INT); }
    OpAttrDef& ListInt(std::vector<int64_t> value)
    {
        list_int_ = std::move(value);
        return set(Kind::LIST_INT);
    }
    OpAttrDef& Version(uint32_t) { return *this; }
    OpAttrDef& Comment(const char*) { return *this; }

    const std::string& jk_name() const { return name_; }
    Kind jk_kind() const { return kind_; }
    Option jk_attr_type() const { return attr_type_; }
    bool jk_bool() const { return bool_; }
    float jk_float() const { return float_; }
    int64_t jk_int() const { return int_; }
    const std::string& jk_str() const { return str_; }
    const std::vector<int64_t>& jk_list_int() const { return list_int_; }
    const std::vector<float>& jk_list_float() const { return list_float_; }

private:
    OpAttrDef& set(Kind kind)
    {
        kind_ = kind;
        return *this;
    }
    std::string name_;
    Option attr_type_ = REQUIRED;
    Kind kind_ = Kind::UNSET;
    bool bool_ = false;
    float float_ = 0.0f;
    int64_t int_ = 0;
    std::string str_;
    std::vector<int64_t> list_int_;
    std::vector<float> list_float_;
};

// OpAICoreConfig: per-SoC flags (accepted, not modelled).
class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char*) {}
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
    OpParamDef& Input(const char* name) { return params_.emplace_back(name); }
    OpParamDef& Output(const char* name) { return params_.emplace_back(name); }

private:
    std::deque<OpParamDef> params_;
};

class OpAICoreDef {
public:
    OpAICoreDef& SetTiling(TilingKernelFunc func)
    {
        tiling_ = func;
        return *this;
    }
    OpAICoreDef& AddConfig(const char* soc)
    {
        socs_.emplace_back(soc != nullptr ? soc : "");
        return *this;
    }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }
    TilingKernelFunc jk_tiling() const { return tiling_; }
    const std::vector<std::string>& jk_socs() const { return socs_; }

private:
    TilingKernelFunc tiling_ = nullptr;
    std::vector<std::string> socs_;
};

// ops::OpDef: the operator's IR definition, built in the user's constructor.
class OpDef {
public:
    explicit OpDef(const char* type) : type_(type != nullptr ? type : "") {}
    OpParamDef& Input(const char* name) { return inputs_.emplace_back(name); }
    OpParamDef& Output(const char* name) { return outputs_.emplace_back(name); }
    OpAttrDef& Attr(const char* name) { return attrs_.emplace_back(name); }
    OpDef& SetInferShape(InferShapeKernelFunc func)
    {
        infer_shape_ = func;
        return *this;
    }
    OpDef& SetInferDataType(InferDataTypeKernelFunc func)
    {
        infer_data_type_ = func;
        return *this;
    }
    template <typename F>
    OpDef& SetInferShapeRange(F)
    {
        return *this;
    }
    OpAICoreDef& AICore() { return aicore_; }

    const std::string& jk_type() const { return type_; }
    const std::deque<OpParamDef>& jk_inputs() const { return inputs_; }
    const std::deque<OpParamDef>& jk_outputs() const { return outputs_; }
    const std::deque<OpAttrDef>& jk_attrs() const { return attrs_; }
    const OpAICoreDef& jk_aicore() const { return aicore_; }

private:
    std::string type_;
    std::deque<OpParamDef> inputs_;
    std::deque<OpParamDef> outputs_;
    std::deque<OpAttrDef> attrs_;
    InferShapeKernelFunc infer_shape_ = nullptr;
    InferDataTypeKernelFunc infer_data_type_ = nullptr;
    OpAICoreDef aicore_;
};

}  // namespace ops

// OP_ADD(OpType): the harness calls jk_op_add_create() to build the definition (see top of file).
#define OP_ADD(opType, ...)                                                                     \
    extern "C" ::ops::OpDef* jk_op_add_create(void) { return new opType(#opType); }            \
    extern "C" const char* jk_op_add_type(void) { return #opType; }                            \
    static_assert(true, "OP_ADD")

#endif  // JK_REGISTER_OP_DEF_REGISTRY_H
