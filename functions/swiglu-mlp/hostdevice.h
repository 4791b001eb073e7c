// hostdevice.h — SWIGLU_HD marks helpers shared by host C++ (g++, C++23) and CUDA device code.
//
// Headers that use it must stay valid C++17 so nvcc can include them; they must not include
// junction/base/error.h or any other C++23-only header.
#pragma once

#if defined(__CUDACC__)
#define SWIGLU_HD __host__ __device__ __forceinline__
#else
#define SWIGLU_HD inline
#endif
