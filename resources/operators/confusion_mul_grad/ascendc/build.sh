#!/bin/bash
# Configure with the default preset, build the kernels and pack build_out/custom_opp_<os>_<arch>.run.
set -e
script_path=$(realpath "$(dirname "$0")")
rm -rf "$script_path/build_out"
mkdir -p "$script_path/build_out"
cd "$script_path"
cmake --preset=default
cmake --build build_out --target binary -j"$(nproc)"
cmake --build build_out --target all -j"$(nproc)"
cmake --build build_out --target package -j"$(nproc)"
