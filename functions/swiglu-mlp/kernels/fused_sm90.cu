// fused_sm90.cu — fused SwiGLU gate/up kernels for sm_90a: TMA + mbarrier pipeline, a producer
// warp and two wgmma consumer warpgroups, SiLU·mul on the fp32 accumulators, bf16 H only.
//
// CTA: 384 threads = warpgroup 0 (producer: one thread issues TMA loads; setmaxnreg 40) and
// warpgroups 1-2 (consumers: setmaxnreg 232). Tile: 128 rows of X (64 per consumer) x 128
// columns of H; per k-step of 64 the producer loads one X tile and the matching Wg and Wu tiles
// (3 x 16 KiB, 128-byte swizzle) into one of 4 stages and signals a "full" mbarrier with the
// byte count; Wu's tile lies right after Wg's, so each consumer issues 4 wgmma.m64n256k16 per
// k-step that compute gate and up together from one read of its X rows, and releases the stage
// on an "empty" mbarrier once its wgmmas have read it (one k-step kept in flight: wait_group 1).
// The last k-step of a tile is peeled out of the k loop, so no wgmma sequence has a branch in
// it and ptxas injects no warpgroup.arrive/wait of its own (C7517/C7519 before 2026-12-04).
// Out-of-range rows/columns of X, Wg, Wu are zero-filled by TMA, so M, N and K tails need no
// special path; stores of H are bounds-checked at the edges.
//
// Schedules (the paper's two):
//   kMainloopOverlap — persistent CTAs (grid = #SMs) walk tiles; in the last k-step the gate
//     wgmmas (m64n128k16 on the gate half) are committed as their own group, SiLU is applied to
//     the gate accumulators while the up wgmmas run, and the producer is already loading the
//     next tile's stages while the consumers finish the epilogue.
//   kEpilogueFusion — one tile per CTA; after the mainloop, SiLU·mul is computed fragment by
//     fragment. Both schedules then store H pairwise (unchecked 4-byte stores for interior
//     tiles, bounds-checked ones at the M/N edges).
// Both compute h = bf16(SiluFast(g) * u), bit-identical to the CPU kernels' SiluMulFast.
//
// Status (2026-12-04): ran on an NVIDIA H200 (driver 580.159.04, nvcc 13.0) before and after
// the m64n256k16 / peeled-last-k-step rework (commit 20e6d8d): both times swiglu_gpu_test
// passed (0 elements beyond tolerance, same output bits) and every shape of swiglu_gpu_bench
// ran; figures in docs/benchmarks/swiglu.md.
//
// The kernel bodies exist only in the sm_90a compilation (__CUDA_ARCH_FEAT_SM90_ALL); the
// other targets get a trap, and the host never launches them there (cc 9.0 is checked).
#include "functions/swiglu-mlp/bf16.h"
#include "functions/swiglu-mlp/kernels/launch.h"
#include "functions/swiglu-mlp/silu.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SWIGLU_SM90_BODY 1
#endif

namespace swiglu::cuda {
namespace {

constexpr int kBM = kSm90BlockM;
constexpr int kBN = kSm90BlockN;
constexpr int kBK = kSm90BlockK;
constexpr int kStages = 4;
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kXTileBytes = kBM * kBK * 2;  // 16 KiB
constexpr int kWTileBytes = kBN * kBK * 2;  // 16 KiB
constexpr int kStageBytes = kXTileBytes + 2 * kWTileBytes;
constexpr int kBarrierBytes = 2 * kStages * 8;
// +1024: the dynamic shared memory base is only 16-byte aligned; 128B-swizzled tiles need 1024.
constexpr int kSmemBytes = kStages * kStageBytes + kBarrierBytes + 1024;
static_assert(kSmemBytes <= 227 * 1024, "exceeds the sm_90 shared memory per block");

#if defined(SWIGLU_SM90_BODY)

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier (PTX ISA 9.7.13.15) ---------------------------------------------------------
__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void MbarArriveExpectTx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void MbarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Blocks until the phase with parity `parity` of the barrier has completed.
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
}

// --- TMA: one 2-D box global -> shared, completion counted in bytes on `bar` ---------------
__device__ __forceinline__ void TmaLoad2d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                          uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// --- wgmma ----------------------------------------------------------------------------------
// Shared-memory matrix descriptor for a K-major tile with 128-byte swizzle: rows of 128 bytes
// (64 bf16), 8-row core-matrix groups 1024 bytes apart (SBO); LBO is unused for this layout.
// Moving along K inside the swizzled row is done by adding the byte offset to the start address.
__device__ __forceinline__ uint64_t SmemDesc(uint32_t addr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>(16 >> 4) << 16;
  d |= static_cast<uint64_t>(1024 >> 4) << 32;
  d |= static_cast<uint64_t>(1) << 62;  // layout: SWIZZLE_128B
  return d;
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads/writes of accumulator registers across wgmma fences
// and waits (it cannot see that wgmma writes them asynchronously).
__device__ __forceinline__ void FenceAccumulators(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulators of one consumer: d[0, 64) = gate, d[64, 128) = up, both in the wgmma m64nN
// f32 fragment layout (see the epilogue). The B tile of a stage is Wg's 128 rows followed by
// Wu's 128 rows (contiguous, same 128-byte swizzle, 8-row groups 1024 bytes apart), so one
// wgmma.m64n256k16 computes gate (columns 0-127) and up (columns 128-255) from one read of A;
// its fragment registers 4 j + r are gate's for j < 16 and up's (same layout) for j >= 16.

// d[128] (+)= A(64x16, smem desc) * B(256x16, smem desc)ᵀ: wgmma.m64n256k16, bf16 in, fp32 acc,
// both operands K-major (no transpose). scale_d == 0 overwrites d (first k-step of a tile).
__device__ __forceinline__ void WgmmaM64N256K16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
      "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "
      "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
        "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
        "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),
        "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]),
        "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),
        "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
        "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// d[kOff, kOff + 64) (+)= A(64x16) * B(128x16)ᵀ: wgmma.m64n128k16 on one half of the
// accumulators (kOff = 0: gate, 64: up); used where gate and up are committed separately.
template <int kOff>
__device__ __forceinline__ void WgmmaM64N128K16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[kOff + 0]), "+f"(d[kOff + 1]), "+f"(d[kOff + 2]), "+f"(d[kOff + 3]),
        "+f"(d[kOff + 4]), "+f"(d[kOff + 5]), "+f"(d[kOff + 6]), "+f"(d[kOff + 7]),
        "+f"(d[kOff + 8]), "+f"(d[kOff + 9]), "+f"(d[kOff + 10]), "+f"(d[kOff + 11]),
        "+f"(d[kOff + 12]), "+f"(d[kOff + 13]), "+f"(d[kOff + 14]), "+f"(d[kOff + 15]),
        "+f"(d[kOff + 16]), "+f"(d[kOff + 17]), "+f"(d[kOff + 18]), "+f"(d[kOff + 19]),
        "+f"(d[kOff + 20]), "+f"(d[kOff + 21]), "+f"(d[kOff + 22]), "+f"(d[kOff + 23]),
        "+f"(d[kOff + 24]), "+f"(d[kOff + 25]), "+f"(d[kOff + 26]), "+f"(d[kOff + 27]),
        "+f"(d[kOff + 28]), "+f"(d[kOff + 29]), "+f"(d[kOff + 30]), "+f"(d[kOff + 31]),
        "+f"(d[kOff + 32]), "+f"(d[kOff + 33]), "+f"(d[kOff + 34]), "+f"(d[kOff + 35]),
        "+f"(d[kOff + 36]), "+f"(d[kOff + 37]), "+f"(d[kOff + 38]), "+f"(d[kOff + 39]),
        "+f"(d[kOff + 40]), "+f"(d[kOff + 41]), "+f"(d[kOff + 42]), "+f"(d[kOff + 43]),
        "+f"(d[kOff + 44]), "+f"(d[kOff + 45]), "+f"(d[kOff + 46]), "+f"(d[kOff + 47]),
        "+f"(d[kOff + 48]), "+f"(d[kOff + 49]), "+f"(d[kOff + 50]), "+f"(d[kOff + 51]),
        "+f"(d[kOff + 52]), "+f"(d[kOff + 53]), "+f"(d[kOff + 54]), "+f"(d[kOff + 55]),
        "+f"(d[kOff + 56]), "+f"(d[kOff + 57]), "+f"(d[kOff + 58]), "+f"(d[kOff + 59]),
        "+f"(d[kOff + 60]), "+f"(d[kOff + 61]), "+f"(d[kOff + 62]), "+f"(d[kOff + 63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// 4 k16 steps over one 64-wide stage, gate and up together: acc (+)= A(64 rows at a_base) *
// [Wg; Wu](256 rows at b_base)ᵀ.
__device__ __forceinline__ void WgmmaStageGateUp(float (&acc)[128], uint32_t a_base,
                                                 uint32_t b_base, bool first) {
#pragma unroll
  for (int ks = 0; ks < kBK / 16; ++ks) {
    WgmmaM64N256K16(acc, SmemDesc(a_base + ks * 32), SmemDesc(b_base + ks * 32),
                    (first && ks == 0) ? 0 : 1);
  }
}

// The same for one half: kOff = 0 (gate, B rows at b_base) or 64 (up).
template <int kOff>
__device__ __forceinline__ void WgmmaStageHalf(float (&acc)[128], uint32_t a_base, uint32_t b_base,
                                               bool first) {
#pragma unroll
  for (int ks = 0; ks < kBK / 16; ++ks) {
    WgmmaM64N128K16<kOff>(acc, SmemDesc(a_base + ks * 32), SmemDesc(b_base + ks * 32),
                          (first && ks == 0) ? 0 : 1);
  }
}

__device__ __forceinline__ uint16_t BitsOf(float h) {
  return Bf16FromFloat(h).bits;
}

// Two adjacent H values of one row; bounds-checked, one 4-byte store when aligned.
__device__ __forceinline__ void StorePair(__nv_bfloat16* h, int m, int n, int row, int col,
                                          uint16_t h0, uint16_t h1) {
  if (row >= m || col >= n) return;
  unsigned short* out = reinterpret_cast<unsigned short*>(h) + static_cast<size_t>(row) * n + col;
  if (col + 1 < n && (n & 1) == 0) {
    *reinterpret_cast<uint32_t*>(out) =
        static_cast<uint32_t>(h0) | (static_cast<uint32_t>(h1) << 16);
  } else {
    out[0] = h0;
    if (col + 1 < n) out[1] = h1;
  }
}

#endif  // SWIGLU_SM90_BODY

template <bool kOverlap>
__global__ void __launch_bounds__(kThreads, 1)
    FusedSm90Kernel(const __grid_constant__ CUtensorMap tm_x,
                    const __grid_constant__ CUtensorMap tm_g,
                    const __grid_constant__ CUtensorMap tm_u, __nv_bfloat16* h, int m, int n,
                    int k) {
#if defined(SWIGLU_SM90_BODY)
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const uint32_t raw = SmemAddr(smem_raw);
  const uint32_t base = (raw + 1023) & ~1023u;
  const uint32_t full_bar = base + kStages * kStageBytes;  // full[s] at full_bar + 8 s
  const uint32_t empty_bar = full_bar + kStages * 8;       // empty[s] at empty_bar + 8 s

  const int warpgroup = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  const int m_tiles = (m + kBM - 1) / kBM;
  const int n_tiles = (n + kBN - 1) / kBN;
  const int num_tiles = m_tiles * n_tiles;
  const int k_tiles = (k + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      MbarInit(full_bar + 8 * s, 1);
      MbarInit(empty_bar + 8 * s, kConsumers);
    }
    // Make the initialised barriers visible to the async proxy (TMA) before anyone uses them.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // Producer warpgroup: give registers to the consumers; one thread issues all loads.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (tid == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        const int tm = tile % m_tiles, tn = tile / m_tiles;  // M fastest: CTAs share W tiles
        for (int kt = 0; kt < k_tiles; ++kt) {
          // A fresh barrier counts as having completed the phase before phase 0, so the first
          // pass over the stages does not wait.
          MbarWait(empty_bar + 8 * stage, phase ^ 1);
          const uint32_t full = full_bar + 8 * stage;
          const uint32_t dst = base + stage * kStageBytes;
          MbarArriveExpectTx(full, kStageBytes);
          TmaLoad2d(dst, &tm_x, kt * kBK, tm * kBM, full);
          TmaLoad2d(dst + kXTileBytes, &tm_g, kt * kBK, tn * kBN, full);
          TmaLoad2d(dst + kXTileBytes + kWTileBytes, &tm_u, kt * kBK, tn * kBN, full);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const int consumer = warpgroup - 1;  // rows [64 c, 64 c + 64) of each tile
  const int warp = tid / 32, lane = tid % 32;
  int stage = 0;
  uint32_t phase = 0;
  float acc[128];  // [0, 64): gate, [64, 128): up (see WgmmaM64N256K16)
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const int tm = tile % m_tiles, tn = tile / m_tiles;
    const uint32_t x_off = consumer * (kXTileBytes / kConsumers);
    // All k-steps but the last: one commit group per k-step, one kept in flight (wait_group 1),
    // and the stage the previous group read released. Straight-line wgmma code: no branch
    // between the fence and the commit, so ptxas injects no warpgroup.arrive/wait of its own.
    int prev_stage = -1;
    for (int kt = 0; kt < k_tiles - 1; ++kt) {
      MbarWait(full_bar + 8 * stage, phase);
      const uint32_t sx = base + stage * kStageBytes + x_off;
      const uint32_t sw = base + stage * kStageBytes + kXTileBytes;  // Wg rows, then Wu rows
      FenceAccumulators(acc);
      WgmmaFence();
      WgmmaStageGateUp(acc, sx, sw, kt == 0);
      WgmmaCommit();
      WgmmaWait<1>();  // the previous k-step's wgmmas are done reading their stage
      FenceAccumulators(acc);
      if (prev_stage >= 0 && tid == 0) MbarArrive(empty_bar + 8 * prev_stage);
      prev_stage = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    // The last k-step (peeled, so its commit/wait pattern is fixed at compile time).
    {
      MbarWait(full_bar + 8 * stage, phase);
      const uint32_t sx = base + stage * kStageBytes + x_off;
      const uint32_t sw = base + stage * kStageBytes + kXTileBytes;
      const bool first = k_tiles == 1;
      FenceAccumulators(acc);
      WgmmaFence();
      if constexpr (kOverlap) {
        // Gate committed as its own group: SiLU(gate) runs while the up wgmmas do.
        WgmmaStageHalf<0>(acc, sx, sw, first);
        WgmmaCommit();
        WgmmaStageHalf<64>(acc, sx, sw + kWTileBytes, first);
        WgmmaCommit();
        WgmmaWait<1>();  // everything but the last up group is done: gate is final
        FenceAccumulators(acc);
        if (prev_stage >= 0 && tid == 0) MbarArrive(empty_bar + 8 * prev_stage);
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = SiluFast(acc[i]);  // overlaps the up wgmma
        WgmmaWait<0>();
        FenceAccumulators(acc);
        if (tid == 0) MbarArrive(empty_bar + 8 * stage);
      } else {
        WgmmaStageGateUp(acc, sx, sw, first);
        WgmmaCommit();
        WgmmaWait<0>();
        FenceAccumulators(acc);
        if (tid == 0) {
          if (prev_stage >= 0) MbarArrive(empty_bar + 8 * prev_stage);
          MbarArrive(empty_bar + 8 * stage);
        }
      }
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }

    // Epilogue. wgmma m64nN accumulator layout: warp w of the warpgroup holds rows
    // 16 w + lane/4 (+8); register 4 j + {0,1} is (row, 8 j + 2 (lane % 4) + {0,1}),
    // 4 j + {2,3} the same columns 8 rows down. Gate is acc[4 j + r], up acc[64 + 4 j + r].
    const int row0 = tm * kBM + consumer * 64 + warp * 16 + lane / 4;
    const int col0 = tn * kBN + 2 * (lane % 4);
    uint32_t pairs[kBN / 4];  // pairs[2 j + r]: the two H values of row0 + 8 r, col0 + 8 j (+1)
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) {
      const float* g = &acc[4 * j];
      const float* u = &acc[64 + 4 * j];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        uint16_t h0, h1;
        if constexpr (kOverlap) {
          // acc[0, 64) already holds SiLU(gate).
          h0 = BitsOf(g[2 * r] * u[2 * r]);
          h1 = BitsOf(g[2 * r + 1] * u[2 * r + 1]);
        } else {
          h0 = BitsOf(SiluMulFast(g[2 * r], u[2 * r]));
          h1 = BitsOf(SiluMulFast(g[2 * r + 1], u[2 * r + 1]));
        }
        pairs[2 * j + r] = static_cast<uint32_t>(h0) | (static_cast<uint32_t>(h1) << 16);
      }
    }
    if ((tm + 1) * kBM <= m && (tn + 1) * kBN <= n && (n & 1) == 0) {
      // Interior tile, even row width: every pair is in range and 4-byte aligned.
      uint32_t* out = reinterpret_cast<uint32_t*>(
          reinterpret_cast<unsigned short*>(h) + static_cast<size_t>(row0) * n + col0);
      const size_t down8 = static_cast<size_t>(4) * n;  // 8 rows, in uint32 units
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        out[4 * j] = pairs[2 * j];
        out[down8 + 4 * j] = pairs[2 * j + 1];
      }
    } else {
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        const int col = col0 + 8 * j;
        StorePair(h, m, n, row0, col, pairs[2 * j] & 0xffffu, pairs[2 * j] >> 16);
        StorePair(h, m, n, row0 + 8, col, pairs[2 * j + 1] & 0xffffu, pairs[2 * j + 1] >> 16);
      }
    }
  }
#else
  __trap();  // built for another architecture; the host launches this only on cc 9.0
#endif
}

}  // namespace

bool Sm90KernelsCompiled() {
  // The host pass cannot see which device passes ran; ask the runtime whether an sm_90a image
  // of the kernel exists (binaryVersion 90) when a cc 9.0 device is current.
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, FusedSm90Kernel<true>) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.binaryVersion == 90;
}

cudaError_t LaunchFusedSm90(const GateUpProblem& p, const Sm90TensorMaps& maps,
                            Sm90Schedule schedule, int num_sms, cudaStream_t stream) {
  if (p.m < 1 || p.n < 1 || p.k < 8 || p.k % 8 != 0 || num_sms < 1) return cudaErrorInvalidValue;
  const int64_t tiles = static_cast<int64_t>((p.m + kBM - 1) / kBM) * ((p.n + kBN - 1) / kBN);
  if (tiles > (int64_t{1} << 31) - 1) return cudaErrorInvalidValue;
  if (schedule == Sm90Schedule::kMainloopOverlap) {
    static const cudaError_t attr = cudaFuncSetAttribute(
        FusedSm90Kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (attr != cudaSuccess) return attr;
    const int grid = static_cast<int>(tiles < num_sms ? tiles : num_sms);
    FusedSm90Kernel<true>
        <<<grid, kThreads, kSmemBytes, stream>>>(maps.x, maps.wg, maps.wu, p.h, p.m, p.n, p.k);
  } else {
    static const cudaError_t attr = cudaFuncSetAttribute(
        FusedSm90Kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (attr != cudaSuccess) return attr;
    FusedSm90Kernel<false><<<static_cast<int>(tiles), kThreads, kSmemBytes, stream>>>(
        maps.x, maps.wg, maps.wu, p.h, p.m, p.n, p.k);
  }
  return cudaGetLastError();
}

}  // namespace swiglu::cuda
