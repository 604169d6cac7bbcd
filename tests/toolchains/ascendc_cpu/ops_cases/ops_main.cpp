// Test driver for the ascendc-cpu vector, cast and reduction APIs (tests/toolchains/ascendc_cpu).
//
// Why a script-driven driver: the Python tests build inputs and numpy references; one binary,
// compiled once per session, runs any sequence of UB allocations and API calls they describe.
// Usage: ops_main <script>   Script lines (whitespace separated):
//   alloc NAME DT N            UB buffer of N elements (DT = f32 | f16 | i32), 32-byte aligned
//   view NAME SRC K            NAME = SRC[K] (element offset; for misalignment checks)
//   fill NAME FILE             write the file's raw elements with SetValue
//   dump NAME FILE             PipeBarrier<PIPE_ALL>, then GetValue every element into FILE
//   stats                      print "STAT op pipe calls cycles" per op of the engine
//   maskreg ...                SetMaskCount / SetMaskNorm / ResetMask / SetVectorMask
//   peek NAME K                GetValue(K) on S with no barrier (a V write before it is a hazard)
//   call ...                   one API call, see dispatch() below
// On misuse: prints one JSON line {"check", "file", "line", "message"} and exits 7.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_operator.h"

using namespace AscendC;

namespace {

struct Buf {
  std::string dt;
  LocalTensor<float> t;  // the buffer as float; reinterpret for the other types
};

std::map<std::string, Buf> g_bufs;
std::vector<TBuf<TPosition::VECCALC>*> g_tbufs;
TPipe* g_pipe = nullptr;

template <typename T>
LocalTensor<T> get(const std::string& name) {
  auto it = g_bufs.find(name);
  if (it == g_bufs.end()) {
    std::fprintf(stderr, "unknown buffer %s\n", name.c_str());
    std::exit(2);
  }
  return it->second.t.template ReinterpretCast<T>();
}

size_t esize(const std::string& dt) { return dt == "f16" ? 2 : 4; }

template <typename T>
T scalar(const std::string& s) {
  if constexpr (std::is_same_v<T, int32_t>) return static_cast<int32_t>(std::stol(s));
  else return static_cast<T>(std::stof(s));
}

using Args = std::vector<std::string>;
int64_t I(const Args& a, size_t k) { return std::stoll(a.at(k)); }
uint64_t U(const Args& a, size_t k) { return std::stoull(a.at(k), nullptr, 0); }

BinaryRepeatParams bparams(const Args& a, size_t k) {
  return BinaryRepeatParams(uint8_t(I(a, k)), uint8_t(I(a, k + 1)), uint8_t(I(a, k + 2)),
                            uint8_t(I(a, k + 3)), uint8_t(I(a, k + 4)), uint8_t(I(a, k + 5)));
}
UnaryRepeatParams uparams(const Args& a, size_t k) {
  UnaryRepeatParams p;
  p.dstBlkStride = uint16_t(I(a, k));
  p.srcBlkStride = uint16_t(I(a, k + 1));
  p.dstRepStride = uint8_t(I(a, k + 2));
  p.srcRepStride = uint8_t(I(a, k + 3));
  return p;
}

// call BIN OP DT count d a b N | mask d a b M R <6 strides> | bits d a b LO HI R <6 strides>
template <typename T>
void binary(const std::string& op, const Args& a) {
  const std::string& form = a.at(3);
  auto d = get<T>(a.at(4)), x = get<T>(a.at(5)), y = get<T>(a.at(6));
  const uint64_t bits[2] = {form == "bits" ? U(a, 7) : 0, form == "bits" ? U(a, 8) : 0};
  const size_t k = form == "bits" ? 9 : 8;
  // Explicit Add calls (not through the macro) so misuse sites name these exact lines.
  if (op == "Add" && form == "count") {
    Add(d, x, y, int32_t(I(a, 7)));  // SITE:add-count
    return;
  }
  if (op == "Add" && form == "mask") {
    Add(d, x, y, U(a, 7), int32_t(I(a, 8)), bparams(a, 9));  // SITE:add-mask
    return;
  }
  if (form == "reg") {  // isSetMask = false: the mask register; ... reg d a b R <6 strides>
    if (op == "Add") Add<T, false>(d, x, y, MASK_PLACEHOLDER, int32_t(I(a, 7)), bparams(a, 8));
    else if (op == "Mul") Mul<T, false>(d, x, y, MASK_PLACEHOLDER, int32_t(I(a, 7)), bparams(a, 8));
    else std::exit(2);
    return;
  }
#define JK_BIN(NAME)                                                                 \
  if (op == #NAME) {                                                                 \
    if (form == "count") NAME(d, x, y, int32_t(I(a, 7)));                            \
    else if (form == "mask") NAME(d, x, y, U(a, 7), int32_t(I(a, 8)), bparams(a, 9)); \
    else NAME(d, x, y, bits, int32_t(I(a, k)), bparams(a, k + 1));                   \
    return;                                                                          \
  }
  JK_BIN(Add) JK_BIN(Sub) JK_BIN(Mul) JK_BIN(Max) JK_BIN(Min)
  if constexpr (!std::is_same_v<T, int32_t>) { JK_BIN(Div) }
#undef JK_BIN
  std::fprintf(stderr, "unknown binary op %s\n", op.c_str());
  std::exit(2);
}

// call UN OP DT count d s N | mask d s M R <4 strides> | bits d s LO HI R <4 strides>
template <typename T>
void unary(const std::string& op, const Args& a) {
  const std::string& form = a.at(3);
  auto d = get<T>(a.at(4)), s = get<T>(a.at(5));
  const uint64_t bits[2] = {form == "bits" ? U(a, 6) : 0, form == "bits" ? U(a, 7) : 0};
  const size_t k = form == "bits" ? 8 : 7;
#define JK_UN(NAME)                                                                  \
  if (op == #NAME) {                                                                 \
    if (form == "count") NAME(d, s, int32_t(I(a, 6)));                               \
    else if (form == "mask") NAME(d, s, U(a, 6), int32_t(I(a, 7)), uparams(a, 8));   \
    else NAME(d, s, bits, int32_t(I(a, k)), uparams(a, k + 1));                      \
    return;                                                                          \
  }
  if constexpr (!std::is_same_v<T, int32_t>) {
    JK_UN(Abs) JK_UN(Exp) JK_UN(Ln) JK_UN(Sqrt) JK_UN(Reciprocal)
  }
  JK_UN(Relu)
#undef JK_UN
  std::fprintf(stderr, "unknown unary op %s\n", op.c_str());
  std::exit(2);
}

// call SC OP DT count d s SCALAR N | mask d s SCALAR M R <4 strides> | bits d s SCALAR LO HI R ..
template <typename T>
void scalar_op(const std::string& op, const Args& a) {
  const std::string& form = a.at(3);
  auto d = get<T>(a.at(4)), s = get<T>(a.at(5));
  const T v = scalar<T>(a.at(6));
  const uint64_t bits[2] = {form == "bits" ? U(a, 7) : 0, form == "bits" ? U(a, 8) : 0};
  const size_t k = form == "bits" ? 9 : 8;
#define JK_SC(NAME)                                                                     \
  if (op == #NAME) {                                                                    \
    if (form == "count") NAME(d, s, v, int32_t(I(a, 7)));                               \
    else if (form == "mask") NAME(d, s, v, U(a, 7), int32_t(I(a, 8)), uparams(a, 9));   \
    else NAME(d, s, v, bits, int32_t(I(a, k)), uparams(a, k + 1));                      \
    return;                                                                             \
  }
  JK_SC(Adds) JK_SC(Muls) JK_SC(Maxs) JK_SC(Mins)
#undef JK_SC
  std::fprintf(stderr, "unknown scalar op %s\n", op.c_str());
  std::exit(2);
}

// call DUP DT count d SCALAR N | mask d SCALAR M R blk rep | bits d SCALAR LO HI R blk rep
template <typename T>
void dup(const Args& a) {
  const std::string& form = a.at(2);
  auto d = get<T>(a.at(3));
  const T v = scalar<T>(a.at(4));
  if (form == "count") {
    Duplicate(d, v, int32_t(I(a, 5)));
  } else if (form == "mask") {
    Duplicate(d, v, U(a, 5), int32_t(I(a, 6)), uint16_t(I(a, 7)), uint16_t(I(a, 8)));
  } else {
    const uint64_t bits[2] = {U(a, 5), U(a, 6)};
    Duplicate(d, v, bits, int32_t(I(a, 7)), uint16_t(I(a, 8)), uint16_t(I(a, 9)));
  }
}

RoundMode mode_of(const std::string& s) {
  static const std::map<std::string, RoundMode> m = {
      {"NONE", RoundMode::CAST_NONE},   {"RINT", RoundMode::CAST_RINT},
      {"FLOOR", RoundMode::CAST_FLOOR}, {"CEIL", RoundMode::CAST_CEIL},
      {"ROUND", RoundMode::CAST_ROUND}, {"TRUNC", RoundMode::CAST_TRUNC},
      {"ODD", RoundMode::CAST_ODD}};
  return m.at(s);
}

// call CAST DDT SDT MODE count d s N | mask d s M R <4 strides>
template <typename D, typename S>
void cast(const Args& a) {
  const RoundMode mode = mode_of(a.at(3));
  const std::string& form = a.at(4);
  auto d = get<D>(a.at(5));
  auto s = get<S>(a.at(6));
  if (form == "count") Cast(d, s, mode, uint32_t(I(a, 7)));
  else Cast(d, s, mode, U(a, 7), int32_t(I(a, 8)), uparams(a, 9));
}

void cast_dispatch(const Args& a) {
  const std::string pair = a.at(1) + "<" + a.at(2);
  if (pair == "f16<f32") return cast<half, float>(a);
  if (pair == "f32<f16") return cast<float, half>(a);
  if (pair == "i32<f32") return cast<int32_t, float>(a);
  if (pair == "i32<f16") return cast<int32_t, half>(a);
  if (pair == "f32<i32") return cast<float, int32_t>(a);
  if (pair == "f32<f32") return cast<float, float>(a);
  std::fprintf(stderr, "unknown cast %s\n", pair.c_str());
  std::exit(2);
}

// call RSUM DT count d s w N | mask d s w M R srep | bits d s w LO HI R srep
// call RMAX/RMIN DT count d s w N IDX | mask d s w M R srep IDX
// call WRSUM DT mask d s M R drep sblk srep | bits d s LO HI R drep sblk srep
// call BRSUM DT mask d s R M drep sblk srep | bits d s R LO HI drep sblk srep
// call WRMAX/WRMIN DT mask d s M R drep sblk srep ORDER
template <typename T>
void reduce(const std::string& api, const Args& a) {
  const std::string& form = a.at(2);
  auto d = get<T>(a.at(3)), s = get<T>(a.at(4));
  if (api == "RSUM" || api == "RMAX" || api == "RMIN") {
    auto w = get<T>(a.at(5));
    if (api == "RSUM") {
      if (form == "count") ReduceSum(d, s, w, int32_t(I(a, 6)));
      else if (form == "mask") ReduceSum(d, s, w, int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)));
      else {
        const uint64_t bits[2] = {U(a, 6), U(a, 7)};
        ReduceSum(d, s, w, bits, int32_t(I(a, 8)), int32_t(I(a, 9)));
      }
      return;
    }
    const bool isMax = api == "RMAX";
    if (form == "count") {
      const bool idx = I(a, 7) != 0;
      if (isMax) ReduceMax(d, s, w, int32_t(I(a, 6)), idx);
      else ReduceMin(d, s, w, int32_t(I(a, 6)), idx);
    } else {
      const bool idx = I(a, 9) != 0;
      if (isMax) ReduceMax(d, s, w, int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)), idx);
      else ReduceMin(d, s, w, int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)), idx);
    }
    return;
  }
  if (api == "WRMAX" || api == "WRMIN") {  // ... mask d s M R drep sblk srep ORDER(0..3)
    const auto order = static_cast<ReduceOrder>(I(a, 10));
    if (api == "WRMAX")
      WholeReduceMax(d, s, int32_t(I(a, 5)), int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)),
                     int32_t(I(a, 9)), order);
    else
      WholeReduceMin(d, s, int32_t(I(a, 5)), int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)),
                     int32_t(I(a, 9)), order);
    return;
  }
  if (api == "WRSUM") {
    if (form == "mask") {
      WholeReduceSum(d, s, int32_t(I(a, 5)), int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)),
                     int32_t(I(a, 9)));
    } else {
      const uint64_t bits[2] = {U(a, 5), U(a, 6)};
      WholeReduceSum(d, s, bits, int32_t(I(a, 7)), int32_t(I(a, 8)), int32_t(I(a, 9)),
                     int32_t(I(a, 10)));
    }
    return;
  }
  if (form == "reg") {  // BRSUM DT reg d s R drep sblk srep (isSetMask = false)
    BlockReduceSum<T, false>(d, s, int32_t(I(a, 5)), MASK_PLACEHOLDER, int32_t(I(a, 6)),
                             int32_t(I(a, 7)), int32_t(I(a, 8)));
  } else if (form == "mask") {
    BlockReduceSum(d, s, int32_t(I(a, 5)), int32_t(I(a, 6)), int32_t(I(a, 7)), int32_t(I(a, 8)),
                   int32_t(I(a, 9)));
  } else {
    const uint64_t bits[2] = {U(a, 6), U(a, 7)};
    BlockReduceSum(d, s, int32_t(I(a, 5)), bits, int32_t(I(a, 8)), int32_t(I(a, 9)),
                   int32_t(I(a, 10)));
  }
}

void dispatch(const Args& a) {
  const std::string& kind = a.at(0);
  const std::string& dt = a.at(2);
  auto pick = [&](auto f32, auto f16, auto i32) {
    if (dt == "f32") f32();
    else if (dt == "f16") f16();
    else i32();
  };
  if (kind == "BIN") {
    const std::string op = a.at(1);
    pick([&] { binary<float>(op, a); }, [&] { binary<half>(op, a); },
         [&] { binary<int32_t>(op, a); });
  } else if (kind == "UN") {
    const std::string op = a.at(1);
    pick([&] { unary<float>(op, a); }, [&] { unary<half>(op, a); },
         [&] { unary<int32_t>(op, a); });
  } else if (kind == "SC") {
    const std::string op = a.at(1);
    pick([&] { scalar_op<float>(op, a); }, [&] { scalar_op<half>(op, a); },
         [&] { scalar_op<int32_t>(op, a); });
  } else if (kind == "DUP") {
    const std::string& d1 = a.at(1);
    if (d1 == "f32") dup<float>(a);
    else if (d1 == "f16") dup<half>(a);
    else dup<int32_t>(a);
  } else if (kind == "CAST") {
    cast_dispatch(a);
  } else {
    const std::string& d1 = a.at(1);
    if (d1 == "f32") reduce<float>(kind, a);
    else reduce<half>(kind, a);
  }
}

Args split(const std::string& line) {
  std::istringstream in(line);
  Args out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

void run_line(const Args& a) {
  const std::string& cmd = a.at(0);
  if (cmd == "alloc") {
    const size_t bytes = (esize(a.at(2)) * std::stoull(a.at(3)) + 31) / 32 * 32;
    auto* tb = new TBuf<TPosition::VECCALC>();
    g_pipe->InitBuffer(*tb, uint32_t(bytes));
    g_tbufs.push_back(tb);
    g_bufs[a.at(1)] = Buf{a.at(2), tb->Get<float>()};
  } else if (cmd == "view") {
    const Buf& src = g_bufs.at(a.at(2));
    const uint32_t k = uint32_t(std::stoul(a.at(3)));
    LocalTensor<float> t;
    if (src.dt == "f16") t = src.t.ReinterpretCast<half>()[k].ReinterpretCast<float>();
    else t = src.t[k];
    g_bufs[a.at(1)] = Buf{src.dt, t};
  } else if (cmd == "fill" || cmd == "dump") {
    const Buf& b = g_bufs.at(a.at(1));
    const size_t es = esize(b.dt);
    if (cmd == "dump") PipeBarrier<PIPE_ALL>();
    if (cmd == "fill") {
      std::ifstream f(a.at(2), std::ios::binary);
      std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (size_t i = 0; i * es < raw.size(); ++i) {
        if (es == 2) {
          half v;
          std::memcpy(&v, raw.data() + i * 2, 2);
          b.t.ReinterpretCast<half>().SetValue(uint32_t(i), v);
        } else {
          float v;
          std::memcpy(&v, raw.data() + i * 4, 4);
          b.t.SetValue(uint32_t(i), v);
        }
      }
    } else {
      const size_t n = std::stoull(a.at(3));
      std::vector<char> raw(n * es);
      for (size_t i = 0; i < n; ++i) {
        if (es == 2) {
          const half v = b.t.ReinterpretCast<half>().GetValue(uint32_t(i));
          std::memcpy(raw.data() + i * 2, &v, 2);
        } else {
          const float v = b.t.GetValue(uint32_t(i));
          std::memcpy(raw.data() + i * 4, &v, 4);
        }
      }
      std::ofstream(a.at(2), std::ios::binary).write(raw.data(), std::streamsize(raw.size()));
    }
  } else if (cmd == "peek") {  // peek NAME K: GetValue(K) with NO barrier (hazard checks)
    const Buf& b = g_bufs.at(a.at(1));
    const float v = b.t.GetValue(uint32_t(std::stoul(a.at(2))));  // SITE:peek
    std::printf("PEEK %g\n", double(v));
  } else if (cmd == "maskreg") {  // maskreg count | norm | reset | bits DT HI LO | len DT N
    const std::string& what = a.at(1);
    if (what == "count") SetMaskCount();
    else if (what == "norm") SetMaskNorm();
    else if (what == "reset") ResetMask();
    else if (what == "bits" && a.at(2) == "f16") SetVectorMask<half>(U(a, 3), U(a, 4));
    else if (what == "bits") SetVectorMask<float>(U(a, 3), U(a, 4));
    else if (a.at(2) == "f16") SetVectorMask<half>(int32_t(I(a, 3)));
    else SetVectorMask<float>(int32_t(I(a, 3)));
  } else if (cmd == "stats") {
    for (const auto& s : jk::eng().op_stats()) {
      std::printf("STAT %s %d %llu %llu\n", s.op.c_str(), int(s.pipe),
                  (unsigned long long)s.calls, (unsigned long long)s.cycles);
    }
  } else if (cmd == "call") {
    dispatch(Args(a.begin() + 1, a.end()));
  } else {
    std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
    std::exit(2);
  }
}

}  // namespace

#include "ops_engine_setup.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ops_main <script>\n");
    return 2;
  }
  jk_test_setup_engine();
  g_pipe = new TPipe();
  std::ifstream script(argv[1]);
  std::string line;
  try {
    while (std::getline(script, line)) {
      const Args a = split(line);
      if (!a.empty() && a[0][0] != '#') run_line(a);
    }
  } catch (const jk::Misuse&) {
    const auto* m = jk::eng().first_misuse();
    std::string msg;
    for (char c : std::string(m->message)) msg += (c == '"' || c == '\\') ? '\'' : c;
    std::printf("{\"check\": \"%s\", \"file\": \"%s\", \"line\": %u, \"message\": \"%s\"}\n",
                std::string(m->check).c_str(), std::string(m->file).c_str(), unsigned(m->line),
                msg.c_str());
    return 7;
  }
  return 0;
}
