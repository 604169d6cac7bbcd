// Engine set-up for ops_main.cpp: one core of a 910B-like SoC with a fixed, simple vector cost
// table (the tests check that each call is ONE V instruction costing startup + repeats * k:
// startup 10, k = 2 for 4-byte and 3 for 2-byte dtypes).
#pragma once

inline jk::VectorCost jk_test_vector_cost(const char*, uint32_t dtype_bytes) {
  return jk::VectorCost{10, dtype_bytes == 2 ? 3u : 2u};
}

inline void jk_test_setup_engine() {
  jk::SocParams p{};
  p.name = "ops-test";
  p.ub_bytes = 196608;
  p.block_bytes = 32;
  p.repeat_bytes = 256;
  p.max_repeat = 255;
  p.vector_cores = 1;
  p.clock_mhz = 1000.0;
  p.mte2_latency = 100;
  p.mte2_bytes_per_cycle = 32.0;
  p.mte3_latency = 100;
  p.mte3_bytes_per_cycle = 32.0;
  p.scalar_issue = 1;
  p.scalar_ub_access = 1;
  p.flag_cycles = 1;
  p.barrier_cycles = 1;
  p.vector_cost = &jk_test_vector_cost;
  jk::g_engine = new jk::Engine(p);
  jk::eng().begin_core(0, 1);
}
