// hip_cpu: the OCP storage types of ROCm's hip_ext_ocp.h that kernels declare their MFMA operands with.
#pragma once
#include <hip_cpu_runtime.h>
typedef unsigned char __amd_fp4x2_storage_t;
typedef unsigned char __amd_fp8_storage_t;
typedef unsigned short __amd_fp8x2_storage_t;
typedef unsigned char __amd_scale_t;
