struct AxisParams {
    pad_before: u32,
    kept: u32,
    crop_start: u32,
    start: u32,
    len: u32,
    len_magic: u32,
    len_shift: u32,
    in_stride: u32,
    out_stride: u32,
    period: u32,
    period_offset: u32,
    period_magic: u32,
    period_shift: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}
struct Params {
    rank: u32,
    count: u32,
    first: u32,
    elems: u32,
    in_base: u32,
    out_base: u32,
    row_first: u32,
    row_words: u32,
    pack: u32,
    row_lanes: u32,
    lanes_magic: u32,
    lanes_shift: u32,
    constant: vec4<u32>,
    axes: array<AxisParams, MAX_RANK>,
}
const MAX_RANK: u32 = 16u;
const WORKGROUP: u32 = 64u;
const MAGIC_DIVIDE_BY_ONE: u32 = 0u;
const MULTI_PERIOD: bool = false;
const WIDE_ELEMS: u32 = 16u;
alias WORD = u32;
fn constant_word() -> WORD { return P.constant.x; }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> src: array<WORD>;
@group(0) @binding(2) var<storage, read_write> dst: array<WORD>;

// Every access to the input and output of a pad or interior pad shader goes through these
// (a test counts each word's stores by rewriting store_dst: tests/store_once.rs).

// A source offset that is none: the constant.
const NONE: u32 = 0xffffffffu;

fn load_src(i: u32) -> WORD {
    return src[i];
}

fn store_dst(i: u32, v: WORD) {
    dst[i] = v;
}

// A read of the output (the bytes of a word outside the window, kept).
fn load_dst(i: u32) -> WORD {
    return dst[i];
}

// Shared by every pad shader (after access.wgsl): the walk from output coordinates to input
// offsets. The host prepends the uniform's structs, every constant the shaders share with it
// (declared from tables: PipelineKey::constants in src/gpu/shader.rs for MAX_RANK, WORKGROUP
// and the rest every kernel reads, each kernel's own in its module under src/gpu/kernels/),
// the width's WORD alias and the bindings (P, src, dst); the mode file supplies
// `source_coord`.

// The uniform's structs, AxisParams (one axis; coordinates are global, over the whole
// output, and this dispatch covers [start, start + len) of each) and Params, are declared
// once in src/gpu/params.rs (`uniform!`) and prepended with the constants.

// (o - pad before) mod period on axis d, for the periodic modes.
fn position_in_period(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let t = o + a.period_offset;
    return t - divide(t, a.period_magic, a.period_shift) * a.period;
}

// A row's offsets in the input and output bindings. Offsets wrap (see Params), so any u32
// may be a real offset: `inside` says whether the row reads the input at all.
struct Row {
    src: u32,
    dst: u32,
    inside: bool,
}

// Row `r` moved to window-local coordinate c on axis d.
fn step(r: Row, d: u32, c: u32) -> Row {
    let a = P.axes[d];
    let o = c + a.start;
    let k = source_coord(o, d);
    return Row(r.src + (a.crop_start + k) * a.in_stride, r.dst + o * a.out_stride, r.inside && k != NONE);
}

// Row `r` moved along axes `first` and up, at window-local linear position `lin` over them;
// the outermost axis takes what is left, undivided.
fn walk(start: Row, first: u32, lin_in: u32) -> Row {
    var r = start;
    var lin = lin_in;
    for (var d = first; d < P.rank; d++) {
        var c = lin;
        if (d + 1u < P.rank) {
            let a = P.axes[d];
            lin = divide(c, a.len_magic, a.len_shift);
            c -= lin * a.len;
        }
        r = step(r, d, c);
    }
    return r;
}

// The row with window-local coordinate y on axis `first` and window-local linear position z
// over the axes above it: the grid supplies both, so common ranks divide nothing.
fn row_at(first: u32, y: u32, z: u32) -> Row {
    var r = Row(P.in_base, P.out_base, true);
    if (first < P.rank) {
        r = step(r, first, y);
    }
    if (first + 2u == P.rank) {
        // One axis above: z is its coordinate (the common case; no loop for llvmpipe to run).
        return step(r, first + 1u, z);
    }
    return walk(r, first + 1u, z);
}

// The row at window-local linear position `row` over axes 1 and up: its coordinate on axis 1
// by one division, the position over the axes above walked by row_at (no loop for common
// ranks). Axis 1 is all zeros for rank 1, where row is 0. The wide and flat kernels' rows.
fn row_of(row: u32) -> Row {
    let a1 = P.axes[1];
    let z = divide(row, a1.len_magic, a1.len_shift);
    return row_at(1u, row - z * a1.len, z);
}

// The row at window-local linear position `row` over axes 1 and up (innermost first).
fn row_offsets(row: u32) -> Row {
    return walk(Row(P.in_base, P.out_base, true), 1u, row);
}

// Division by a runtime value through a magic multiplier, shared by every pipeline (the pads'
// after common.wgsl, the gradient's before backward.wgsl); the host gives
// MAGIC_DIVIDE_BY_ONE and each divisor's magic and shift (src/gpu/params.rs, magic_divisor).

// The high 32 bits of a * b.
fn mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let t = a_hi * b_lo + ((a_lo * b_lo) >> 16u);
    let u = (t & 0xffffu) + a_lo * b_hi;
    return a_hi * b_hi + (t >> 16u) + (u >> 16u);
}

// n / d for n < 2^31, given d's magic multiplier and shift (MAGIC_DIVIDE_BY_ONE: d == 1). Integer
// division by a runtime value is slow on many GPUs and scalarised on CPU-based ones.
fn divide(n: u32, magic: u32, shift: u32) -> u32 {
    return select(mulhi(n, magic) >> shift, n, magic == MAGIC_DIVIDE_BY_ONE);
}

// Reflect mode: mirror without repeating the edge; the host sets the period to 2(n - 1)
// (1 when n == 1, which repeats the one element).
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let j = o - a.pad_before;
    if (!MULTI_PERIOD) {
        // Pads of at most n - 1: one bounce, no modulo.
        return select(select(2u * (a.kept - 1u) - j, a.pad_before - o, o < a.pad_before), j, j < a.kept);
    }
    let k = position_in_period(o, d);
    return select(select(a.period - k, k, k < a.kept), j, j < a.kept);
}

// 32-, 64- and 128-bit words, on a grid of rows: x the position in a row, y and z (linear)
// the row over axes 1 and up. Rows longer than half a workgroup take one each, and each
// invocation writes WIDE_ELEMS of its elements, a grid width apart (so a SIMD group's
// accesses stay contiguous), sharing the row's offsets. Shorter rows would leave most of a
// workgroup idle: as many as fit share one (P.pack, src/gpu/kernels/wide.rs's pack), one element
// an invocation. Any strides on either side.

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let inner = P.axes[0];
    let pack = P.pack;
    let sub = divide(gid.x, inner.len_magic, inner.len_shift);
    let row = (gid.y + gid.z * nwg.y) * pack + sub;
    // Invocations past the rows write nothing: their loop below ends at once. (Returning
    // here instead made every row's loop slower on lavapipe.)
    let len = select(0u, inner.len, sub < pack && row < P.count);
    let r = row_of(row);
    let x0 = gid.x - sub * inner.len;
    let step = nwg.x * WORKGROUP;
    // Four elements at a time, their loads before their stores, so that four loads are in
    // flight (input and output may be one buffer's read-write bindings: no compiler may hoist
    // a load above an earlier store itself).
    for (var e = 0u; e < WIDE_ELEMS; e += 4u) {
        let xa = x0 + e * step;
        // Past the row: later elements are further past (a SIMD group leaves together).
        if (xa >= len) {
            break;
        }
        let xb = xa + step;
        let xc = xb + step;
        let xd = xc + step;
        let va = wide_element(xa, r);
        var vb = constant_word();
        var vc = vb;
        var vd = vb;
        if (xb < len) {
            vb = wide_element(xb, r);
        }
        if (xc < len) {
            vc = wide_element(xc, r);
        }
        if (xd < len) {
            vd = wide_element(xd, r);
        }
        store_dst(r.dst + (xa + inner.start) * inner.out_stride, va);
        if (xb < len) {
            store_dst(r.dst + (xb + inner.start) * inner.out_stride, vb);
        }
        if (xc < len) {
            store_dst(r.dst + (xc + inner.start) * inner.out_stride, vc);
        }
        if (xd < len) {
            store_dst(r.dst + (xd + inner.start) * inner.out_stride, vd);
        }
    }
}

// The word at window-local position x of row r: its input word, or the constant.
fn wide_element(x: u32, r: Row) -> WORD {
    let inner = P.axes[0];
    let k = source_coord(x + inner.start, 0u);
    var v = constant_word();
    if (k != NONE && r.inside) {
        v = load_src(r.src + (inner.crop_start + k) * inner.in_stride);
    }
    return v;
}
