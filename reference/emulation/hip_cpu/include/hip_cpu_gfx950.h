// The gfx950 builtins real MXFP4 kernels use, on the CPU: the scaled MFMAs (wave operations: every lane
// deposits its operands, each lane then computes its own accumulator elements) and the scaled fp4
// conversions. Operand and result layouts per lane are in one place each (the *_layout functions), written
// from the sources in docs/hip_cpu.md and tested against a table and reference/.
#pragma once

typedef int hipcpu_v8i __attribute__((ext_vector_type(8)));
typedef float hipcpu_v16f __attribute__((ext_vector_type(16)));
typedef float hipcpu_v4f __attribute__((ext_vector_type(4)));
typedef float hipcpu_v2f __attribute__((ext_vector_type(2)));
typedef __bf16 hipcpu_v2bf16 __attribute__((ext_vector_type(2)));

namespace hipcpu {

// Element formats of cbsz / blgp: 0 fp8 e4m3, 1 bf8 e5m2, 2 fp6 e2m3, 3 bf6 e3m2, 4 fp4 e2m1.
inline int format_bits(int format) { return format <= 1 ? 8 : format <= 3 ? 6 : 4; }

// The value of one element code (OCP MX formats: e4m3 and the fp6/fp4 formats have no Inf; e4m3's
// S.1111.111 and e5m2's exponent 31 with a mantissa are NaN; e5m2's exponent 31 without one is Inf).
inline double decode_element(unsigned code, int format) {
    int e_bits, m_bits, bias;
    switch (format) {
        case 0: e_bits = 4; m_bits = 3; bias = 7; break;
        case 1: e_bits = 5; m_bits = 2; bias = 15; break;
        case 2: e_bits = 2; m_bits = 3; bias = 1; break;
        case 3: e_bits = 3; m_bits = 2; bias = 3; break;
        default: e_bits = 2; m_bits = 1; bias = 1; break;
    }
    int bits = 1 + e_bits + m_bits;
    unsigned sign = (code >> (bits - 1)) & 1u, exponent = (code >> m_bits) & ((1u << e_bits) - 1),
             mantissa = code & ((1u << m_bits) - 1);
    double s = sign ? -1.0 : 1.0;
    if (format == 0 && exponent == 15 && mantissa == 7) return NAN;
    if (format == 1 && exponent == 31) return mantissa ? NAN : s * INFINITY;
    if (exponent == 0) return s * std::ldexp((double)mantissa, 1 - bias - m_bits);
    return s * std::ldexp((double)((1u << m_bits) | mantissa), (int)exponent - bias - m_bits);
}

// Element ``j`` (0..31) of a lane's A or B operand: the codes are packed densely from bit 0 of the first
// dword (fp4: element 2i in the low nibble of byte i).
inline unsigned operand_code(const hipcpu_v8i& v, int j, int format) {
    int bits = format_bits(format);
    int bit = j * bits;
    unsigned long long window = 0;
    for (int b = 0; b < 2 && bit / 32 + b < 8; ++b)
        window |= (unsigned long long)(unsigned)v[bit / 32 + b] << (32 * b);
    return (unsigned)(window >> (bit % 32)) & ((1u << bits) - 1);
}

// E8M0: 2^(e - 127); 0xFF is NaN.
inline double decode_scale(unsigned e8m0) { return e8m0 == 0xFF ? NAN : std::ldexp(1.0, (int)e8m0 - 127); }

// Layouts (wave64; CDNA4 ISA sections 7.1.4-7.1.5 and 7.2.1; docs/hip_cpu.md). ``rows`` is 32 (32x32x64) or 16
// (16x16x128): lane l serves row (of A; column of B) l % rows. Its 32 items t are K offsets of the
// instruction's K: fp4 and fp6 pack them contiguously, k = 32 (l / rows) + t; fp8 and bf8 in two chunks of
// 16, k = (64 / rows * 16) (t / 16) + 16 (l / rows) + t % 16. The scale of (row, K block b) is in lane
// b * rows + row, whatever the format.
inline int operand_k(int lane, int t, int rows, int format) {
    if (format <= 1) return (rows == 32 ? 32 : 64) * (t / 16) + 16 * (lane / rows) + t % 16;
    return 32 * (lane / rows) + t;
}
// Accumulator element ``i`` of ``lane``: its (row, column) of the rows x rows tile.
struct Cell { int row, col; };
inline Cell accumulator_layout(int lane, int i, int rows) {
    if (rows == 32) return {8 * (i / 4) + 4 * (lane / 32) + (i % 4), lane % 32};
    return {4 * (lane / 16) + i, lane % 16};
}

struct MfmaDeposit {
    hipcpu_v8i a, b;
    int scale_a, scale_b;
};

// Values of every code of every format, once (decode_element is the definition; this is its table).
inline const double* element_table(int format) {
    static double tables[5][256];
    static bool built = false;
    if (!built) {
        for (int f = 0; f < 5; ++f)
            for (unsigned c = 0; c < (1u << format_bits(f)); ++c) tables[f][c] = decode_element(c, f);
        built = true;
    }
    return tables[format < 0 || format > 4 ? 4 : format];
}

// fp6 and fp4 (formats 2, 3, 4) have no NaN or Inf and every value is a multiple of 2^-4 of at most 28 in
// magnitude: a product is a multiple of 2^-8 below 2^10, and a 32-K block's sum one below 2^15, 23 bits. So
// every partial sum of the fma chain is exact in fp32, and the chain's result is the exact sum, which an
// integer sum in units of 2^-8 computes bit for bit (zero included: a chain from +0 never reaches -0).
inline bool block_sum_exact(int format) { return format >= 2 && format <= 4; }

// Values of every code of an exact format in units of 2^-4 (element_table's values times 16).
inline const short* element_units(int format) {
    static short tables[5][64];
    static bool built = false;
    if (!built) {
        for (int f = 2; f < 5; ++f)
            for (unsigned c = 0; c < (1u << format_bits(f)); ++c) tables[f][c] = (short)(decode_element(c, f) * 16.0);
        built = true;
    }
    return tables[format];
}

// The scaled block sums of one wave's lane operation, computed by the first lane that reads them (one
// per wave: another wave's lanes may run theirs before this wave's lanes have all read).
template <int Rows>
struct MfmaTile {
    long long epoch = -1;
    float blocks[Rows][Rows][64 / Rows];
};

// mfma_scale's block sums where both formats are exact (block_sum_exact): integer dot products in units of
// 2^-8, then the same scaling (ldexp of the exact sum) as the fma chain's.
template <int Rows>
inline void mfma_exact_blocks(MfmaTile<Rows>& tile, int opsel_a, int opsel_b, int cbsz, int blgp) {
    constexpr int kBlocks = 64 / Rows, kK = 32 * kBlocks;
    const short* ua = element_units(cbsz);
    const short* ub = element_units(blgp);
    alignas(64) static short av[Rows][kK], bv[Rows][kK];  // [row][k of the instruction]
    int sa[Rows][kBlocks], sb[Rows][kBlocks];
    for (int lane = 0; lane < kWave; ++lane) {
        MfmaDeposit dep = lane_value<MfmaDeposit>(lane);
        int row = lane % Rows, blk = lane / Rows;
        sa[row][blk] = ((unsigned)dep.scale_a >> (8 * (opsel_a & 3))) & 0xFF;
        sb[row][blk] = ((unsigned)dep.scale_b >> (8 * (opsel_b & 3))) & 0xFF;
        for (int t = 0; t < 32; ++t) {
            av[row][operand_k(lane, t, Rows, cbsz)] = ua[operand_code(dep.a, t, cbsz)];
            bv[row][operand_k(lane, t, Rows, blgp)] = ub[operand_code(dep.b, t, blgp)];
        }
    }
    for (int m = 0; m < Rows; ++m)
        for (int n = 0; n < Rows; ++n)
            for (int blk = 0; blk < kBlocks; ++blk) {
                int sum = 0;
                for (int k = 32 * blk; k < 32 * blk + 32; ++k) sum += av[m][k] * bv[n][k];
                tile.blocks[m][n][blk] = sa[m][blk] == 0xFF || sb[n][blk] == 0xFF
                    ? NAN : std::ldexp((float)sum, sa[m][blk] + sb[n][blk] - 254 - 8);
            }
}

// D = C + sum over K blocks of 2^(sa - 127) 2^(sb - 127) sum_{k in block} A[m][k] B[n][k] (ISA 7.2).
// Rounding inside the instruction is not documented: this follows AMD's emulator rocjitsu (each block
// summed by fp32 fma in increasing k, scaled, then added to C in fp32 block by block). For fp4 x fp4 a
// block's sum is exact in fp32, so only the additions to C round (docs/hip_cpu.md).
template <int Rows, class Acc>
inline Acc mfma_scale(const hipcpu_v8i& a, const hipcpu_v8i& b, const Acc& c, int cbsz, int blgp, int opsel_a,
                      int scale_a, int opsel_b, int scale_b) {
    constexpr int kPerLane = Rows == 32 ? 16 : 4, kBlocks = 64 / Rows;
    static MfmaTile<Rows> tiles[16];
    MfmaDeposit mine{a, b, scale_a, scale_b};
    return wave_exchange(mine, [&] {
        MfmaTile<Rows>& tile = tiles[me().linear / kWave];
        if (tile.epoch != wave_epoch() && block_sum_exact(cbsz) && block_sum_exact(blgp)) {
            mfma_exact_blocks<Rows>(tile, opsel_a, opsel_b, cbsz, blgp);
            tile.epoch = wave_epoch();
        }
        if (tile.epoch != wave_epoch()) {
            const double* ta = element_table(cbsz);
            const double* tb = element_table(blgp);
            static float av[Rows][32 * kBlocks], bv[Rows][32 * kBlocks];  // [row][k of the instruction]
            int sa[Rows][kBlocks], sb[Rows][kBlocks];
            for (int lane = 0; lane < kWave; ++lane) {
                MfmaDeposit dep = lane_value<MfmaDeposit>(lane);
                int row = lane % Rows, blk = lane / Rows;
                sa[row][blk] = ((unsigned)dep.scale_a >> (8 * (opsel_a & 3))) & 0xFF;
                sb[row][blk] = ((unsigned)dep.scale_b >> (8 * (opsel_b & 3))) & 0xFF;
                for (int t = 0; t < 32; ++t) {
                    av[row][operand_k(lane, t, Rows, cbsz)] = (float)ta[operand_code(dep.a, t, cbsz)];
                    bv[row][operand_k(lane, t, Rows, blgp)] = (float)tb[operand_code(dep.b, t, blgp)];
                }
            }
            for (int m = 0; m < Rows; ++m)
                for (int n = 0; n < Rows; ++n)
                    for (int blk = 0; blk < kBlocks; ++blk) {
                        float sum = 0.0f;
                        for (int k = 32 * blk; k < 32 * blk + 32; ++k) sum = std::fma(av[m][k], bv[n][k], sum);
                        tile.blocks[m][n][blk] = sa[m][blk] == 0xFF || sb[n][blk] == 0xFF
                            ? NAN : std::ldexp(sum, sa[m][blk] + sb[n][blk] - 254);
                    }
            tile.epoch = wave_epoch();
        }
        Acc out = c;
        const int lane = lane_id();
        for (int i = 0; i < kPerLane; ++i) {
            Cell cell = accumulator_layout(lane, i, Rows);
            float acc = c[i];
            for (int blk = 0; blk < kBlocks; ++blk) acc += tile.blocks[cell.row][cell.col][blk];
            out[i] = acc;
        }
        return out;
    });
}

// v_cvt_scalef32_pk_fp4_*: e2m1(x / 2^(E - 127)), E the scale's exponent field; nearest even; saturating
// to +-6; NaN and Inf to +-6 by their sign; -0 keeps its sign (the model of reference/emulation/gfx950_asm.py).
inline unsigned e2m1_code(float x, float scale) {
    unsigned bits;
    std::memcpy(&bits, &scale, 4);
    unsigned exponent = (bits >> 23) & 0xFF;
    unsigned xb;
    std::memcpy(&xb, &x, 4);
    unsigned sign = (xb >> 31) << 3;
    if (std::isnan(x) || exponent == 0xFF) return sign | 7u;
    double m = std::fabs(std::ldexp((double)x, 127 - (int)exponent));
    static const double lower[4] = {0.25, 1.25, 2.5, 5.0}, upper[3] = {0.75, 1.75, 3.5};
    unsigned code = 0;
    for (double t : lower) code += m > t;
    for (double t : upper) code += m >= t;
    return sign | code;
}

}  // namespace hipcpu

namespace hipcpu {
// The builtin's operands are int32x8, but clang's builtin checking converts any vector of that size
// (real kernels pass 32 x fp4x2 bytes, or 16-byte vectors widened): take the bits of whatever is passed.
template <class V>
inline hipcpu_v8i as_operand(const V& v) {
    static_assert(sizeof(V) <= sizeof(hipcpu_v8i), "an MFMA operand is at most 8 dwords");
    hipcpu_v8i out = {};
    std::memcpy(&out, &v, sizeof(V));
    return out;
}
}  // namespace hipcpu

template <class VA, class VB>
inline hipcpu_v16f __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4_cpu(VA a, VB b, hipcpu_v16f c,
        int cbsz, int blgp, int opsel_a, int scale_a, int opsel_b, int scale_b) {
    return ::hipcpu::mfma_scale<32>(::hipcpu::as_operand(a), ::hipcpu::as_operand(b), c, cbsz, blgp, opsel_a, scale_a,
                                    opsel_b, scale_b);
}
template <class VA, class VB>
inline hipcpu_v4f __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4_cpu(VA a, VB b, hipcpu_v4f c,
        int cbsz, int blgp, int opsel_a, int scale_a, int opsel_b, int scale_b) {
    return ::hipcpu::mfma_scale<16>(::hipcpu::as_operand(a), ::hipcpu::as_operand(b), c, cbsz, blgp, opsel_a, scale_a,
                                    opsel_b, scale_b);
}
#define __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4 __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4_cpu
#define __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4 __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4_cpu

namespace hipcpu {
// The dense bf16 MFMAs of a 16x16 tile (wave64): v_mfma_f32_16x16x16_bf16 (gfx90a on, the "_1k" builtin: 4
// bf16 per lane) and gfx950's v_mfma_f32_16x16x32_bf16 (8 per lane). The dense MFMA input layout: element
// (row i, K k) of A (column i of B) is item k % KL of lane i + 16 (k / KL), KL the items per lane; the
// accumulator as the scaled 16x16's (accumulator_layout). A bf16 product is exact in fp32 (8-bit
// significands); the K products are summed in fp32 in increasing k, then added to C. The order and width of
// the hardware's internal sum are not documented: the judge bounds an fp32 sum in any order. bf16
// subnormals are read as their values (whether the instruction flushes them is not modelled).
template <int KL>
struct Bf16Deposit {
    unsigned short a[KL], b[KL];
};

inline float bf16_value(unsigned short bits) {
    unsigned word = (unsigned)bits << 16;
    float f;
    std::memcpy(&f, &word, 4);
    return f;
}

template <int KL>
inline hipcpu_v4f mfma_bf16_16x16(const Bf16Deposit<KL>& mine, const hipcpu_v4f& c) {
    return wave_exchange(mine, [&] {
        const int lane = lane_id();
        hipcpu_v4f out = c;
        for (int i = 0; i < 4; ++i) {
            Cell cell = accumulator_layout(lane, i, 16);
            float sum = 0.0f;
            for (int k = 0; k < 4 * KL; ++k) {
                const Bf16Deposit<KL> a = lane_value<Bf16Deposit<KL>>(cell.row + 16 * (k / KL));
                const Bf16Deposit<KL> b = lane_value<Bf16Deposit<KL>>(cell.col + 16 * (k / KL));
                sum += bf16_value(a.a[k % KL]) * bf16_value(b.b[k % KL]);
            }
            out[i] = c[i] + sum;
        }
        return out;
    });
}

// Operands of any 16-bit element vector type (real kernels pass bf16, short or uint16 vectors): their bits.
template <int KL, class VA, class VB>
inline hipcpu_v4f mfma_bf16_operands(const VA& a, const VB& b, const hipcpu_v4f& c, int cbsz, int abid, int blgp,
                                     const char* name) {
    static_assert(sizeof(VA) == 2 * KL && sizeof(VB) == 2 * KL, "a bf16 MFMA operand is KL 16-bit elements");
    if (cbsz != 0 || abid != 0 || blgp != 0)  // broadcast and B lane-group controls: not modelled
        not_modelled(std::string(name) + " with cbsz, abid or blgp other than 0");
    Bf16Deposit<KL> mine;
    std::memcpy(mine.a, &a, sizeof(VA));
    std::memcpy(mine.b, &b, sizeof(VB));
    return mfma_bf16_16x16<KL>(mine, c);
}
}  // namespace hipcpu

template <class VA, class VB>
inline hipcpu_v4f __builtin_amdgcn_mfma_f32_16x16x16bf16_1k_cpu(VA a, VB b, hipcpu_v4f c, int cbsz, int abid, int blgp) {
    return ::hipcpu::mfma_bf16_operands<4>(a, b, c, cbsz, abid, blgp, "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k");
}
template <class VA, class VB>
inline hipcpu_v4f __builtin_amdgcn_mfma_f32_16x16x32_bf16_cpu(VA a, VB b, hipcpu_v4f c, int cbsz, int abid, int blgp) {
    return ::hipcpu::mfma_bf16_operands<8>(a, b, c, cbsz, abid, blgp, "__builtin_amdgcn_mfma_f32_16x16x32_bf16");
}
#define __builtin_amdgcn_mfma_f32_16x16x16bf16_1k __builtin_amdgcn_mfma_f32_16x16x16bf16_1k_cpu
#define __builtin_amdgcn_mfma_f32_16x16x32_bf16 __builtin_amdgcn_mfma_f32_16x16x32_bf16_cpu

// The builtins write byte ``sel`` of ``old`` (two e2m1 codes, element 0 low) and keep its other bytes.
inline unsigned __builtin_amdgcn_cvt_scalef32_pk_fp4_f32_cpu(unsigned old, float x0, float x1, float scale, int sel) {
    unsigned byte = ::hipcpu::e2m1_code(x0, scale) | (::hipcpu::e2m1_code(x1, scale) << 4);
    return (old & ~(0xFFu << (8 * (sel & 3)))) | (byte << (8 * (sel & 3)));
}
inline unsigned __builtin_amdgcn_cvt_scalef32_pk_fp4_bf16_cpu(unsigned old, hipcpu_v2bf16 x, float scale, int sel) {
    return __builtin_amdgcn_cvt_scalef32_pk_fp4_f32_cpu(old, (float)x[0], (float)x[1], scale, sel);
}
// Byte ``sel`` of ``src`` (two e2m1 codes) to two floats, each e2m1 x 2^(E - 127).
inline hipcpu_v2f __builtin_amdgcn_cvt_scalef32_pk_f32_fp4_cpu(unsigned src, float scale, int sel) {
    unsigned byte = (src >> (8 * (sel & 3))) & 0xFF, bits;
    std::memcpy(&bits, &scale, 4);
    double s = std::ldexp(1.0, (int)((bits >> 23) & 0xFF) - 127);
    hipcpu_v2f out;
    out[0] = (float)(::hipcpu::decode_element(byte & 0xF, 4) * s);
    out[1] = (float)(::hipcpu::decode_element(byte >> 4, 4) * s);
    return out;
}
// Inline asm operands are 32-bit registers: a value is read and written by its bits (build.translate_asm).
namespace hipcpu {
template <class T> inline unsigned asm_u32(const T& value) {
    static_assert(sizeof(T) <= 4, "a VGPR operand holds at most 32 bits");
    unsigned bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}
template <class T> inline float asm_f32(const T& value) {
    unsigned bits = asm_u32(value);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
template <class T> inline hipcpu_v2bf16 asm_bf16x2(const T& value) {
    unsigned bits = asm_u32(value);
    hipcpu_v2bf16 pair;
    std::memcpy(&pair, &bits, 4);
    return pair;
}
template <class T> inline void asm_store(T& destination, unsigned bits) {
    static_assert(sizeof(T) <= 4, "a VGPR operand holds at most 32 bits");
    std::memcpy(&destination, &bits, sizeof(T));  // the low bytes, as a narrower C type reads the register
}
}  // namespace hipcpu
#define __builtin_amdgcn_cvt_scalef32_pk_fp4_f32 __builtin_amdgcn_cvt_scalef32_pk_fp4_f32_cpu
#define __builtin_amdgcn_cvt_scalef32_pk_fp4_bf16 __builtin_amdgcn_cvt_scalef32_pk_fp4_bf16_cpu
#define __builtin_amdgcn_cvt_scalef32_pk_f32_fp4 __builtin_amdgcn_cvt_scalef32_pk_f32_fp4_cpu

// v_med3_f32 / v_med3_f16: the median of three. NaN operands and equal operands of different bits (+0 and
// -0) are NOT RUN: which one the instruction returns there is not modelled.
template <class T>
inline T hipcpu_med3(T a, T b, T c, const char* name) {
    float x = (float)a, y = (float)b, z = (float)c;
    if (x != x || y != y || z != z) ::hipcpu::not_modelled(std::string(name) + " with a NaN operand");
    if ((x == y && std::signbit(x) != std::signbit(y)) || (x == z && std::signbit(x) != std::signbit(z)) ||
        (y == z && std::signbit(y) != std::signbit(z)))
        ::hipcpu::not_modelled(std::string(name) + " of +0 and -0");
    if ((x <= y && y <= z) || (z <= y && y <= x)) return b;
    if ((y <= x && x <= z) || (z <= x && x <= y)) return a;
    return c;
}
inline float __builtin_amdgcn_fmed3f_cpu(float a, float b, float c) { return hipcpu_med3(a, b, c, "__builtin_amdgcn_fmed3f"); }
inline _Float16 __builtin_amdgcn_fmed3h_cpu(_Float16 a, _Float16 b, _Float16 c) {
    return hipcpu_med3(a, b, c, "__builtin_amdgcn_fmed3h");
}
#define __builtin_amdgcn_fmed3f __builtin_amdgcn_fmed3f_cpu
#define __builtin_amdgcn_fmed3h __builtin_amdgcn_fmed3h_cpu

// The fp8 conversions (v_cvt_pk_fp8_f32, v_cvt_f32_fp8, v_cvt_pk_f32_fp8): declared so that headers using
// them build; their rounding, saturation and NaN rules on gfx950 are not modelled, so a launch reaching one
// is NOT RUN, named.
inline int __builtin_amdgcn_cvt_pk_fp8_f32_cpu(float, float, int, bool) {
    ::hipcpu::not_modelled("__builtin_amdgcn_cvt_pk_fp8_f32 (fp8 conversion)");
}
inline float __builtin_amdgcn_cvt_f32_fp8_cpu(int, int) {
    ::hipcpu::not_modelled("__builtin_amdgcn_cvt_f32_fp8 (fp8 conversion)");
}
inline hipcpu_v2f __builtin_amdgcn_cvt_pk_f32_fp8_cpu(int, bool) {
    ::hipcpu::not_modelled("__builtin_amdgcn_cvt_pk_f32_fp8 (fp8 conversion)");
}
#define __builtin_amdgcn_cvt_pk_fp8_f32 __builtin_amdgcn_cvt_pk_fp8_f32_cpu
#define __builtin_amdgcn_cvt_f32_fp8 __builtin_amdgcn_cvt_f32_fp8_cpu
#define __builtin_amdgcn_cvt_pk_f32_fp8 __builtin_amdgcn_cvt_pk_f32_fp8_cpu

// v_perm_b32: each byte of the result picked by the selector's byte from the eight bytes {S0, S1} (S1 bytes
// 0-3 are 0-3, S0's are 4-7); 8-11 replicate the sign bit of byte 1, 3, 5, 7; 12 is 0x00, 13 and above 0xFF
// (the ISA's byte_permute; LLVM's gfx950 constant folding gives the same on a probe, docs/hip_cpu.md).
inline unsigned __builtin_amdgcn_perm_cpu(unsigned s0, unsigned s1, unsigned selector) {
    unsigned long long in = ((unsigned long long)s0 << 32) | s1;
    unsigned out = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned sel = (selector >> (8 * i)) & 0xFF, byte;
        if (sel >= 13) byte = 0xFF;
        else if (sel == 12) byte = 0x00;
        else if (sel >= 8) byte = ((in >> (8 * (2 * (sel - 8) + 1) + 7)) & 1) ? 0xFF : 0x00;
        else byte = (in >> (8 * sel)) & 0xFF;
        out |= byte << (8 * i);
    }
    return out;
}
#define __builtin_amdgcn_perm __builtin_amdgcn_perm_cpu
