// hip_cpu stands in for ROCm's header: hip_cpu_runtime.h is already included (-include), this is empty.
#pragma once
#include "../hip_cpu_runtime.h"
