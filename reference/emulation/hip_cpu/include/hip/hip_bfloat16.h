#pragma once
#include <hip_cpu_runtime.h>
