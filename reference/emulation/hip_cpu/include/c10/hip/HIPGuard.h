#pragma once
#include <hip_cpu_torch.h>
