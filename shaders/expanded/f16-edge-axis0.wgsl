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
const EPW: u32 = 2u;
const EPW_LOG2: u32 = 1u;
const BITS: u32 = 16u;
const MASK: u32 = 0xffffu;
const NARROW_ROW_WORDS: u32 = 32u;
const ROW_AXES: u32 = 1u;
const MID_WORD: bool = false;
alias WORD = u32;
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

// Edge mode: clamp to the kept range.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    return select(min(o - a.pad_before, a.kept - 1u), 0u, o < a.pad_before);
}

// 8- and 16-bit elements (EPW to a u32 word): each output word has one invocation, so no two
// invocations write one word. Rows run on a row grid (narrow_rows.wgsl's main) where they are
// whole words or, ending mid-word, at least two words long; otherwise each invocation takes
// NARROW_WORD_RUN words a workgroup apart (narrow_words.wgsl's main). Either way a SIMD
// group's lanes store neighbouring words (docs/ARCHITECTURE.md). The window is one contiguous
// run of a dense output starting at element P.first of the binding; a word only partly in it
// keeps its other bytes. The input may have any strides. This file: what both walks share.

// A word of the constant element, repeated (the uniform holds one element).
fn constant_word() -> u32 {
    return (P.constant.x & MASK) * (0xffffffffu / MASK);
}

// The word that starts `shift` bits into input word `lo` and runs on into `hi`.
fn shifted(lo: u32, hi: u32, shift: u32) -> u32 {
    return select((lo >> shift) | (hi << ((32u - shift) & 31u)), lo, shift == 0u);
}

// The input element at offset idx (in elements) of the input binding.
fn input_element(idx: u32) -> u32 {
    return (load_src(idx >> EPW_LOG2) >> ((idx & (EPW - 1u)) * BITS)) & MASK;
}

// Rows along the axes below `first` (1, or 2 where axis 0 is a whole unpadded run): shared by
// the row walks of narrow_rows.wgsl and rows16.wgsl.

// The input element (its offset in the input binding) at window-local position x of row
// `rr`, or NONE where it is the constant: rows along axis 0 (first 1) or along axes 0 and 1
// (first 2).
fn row_source(rr: Row, x: u32, first: u32) -> u32 {
    let a0 = P.axes[0];
    var s = 0u;
    var idx = 0u;
    if (first == 1u) {
        s = source_coord(x + a0.start, 0u);
        idx = rr.src + (a0.crop_start + s) * a0.in_stride;
    } else {
        // Position o on axis 1, channel c of its run.
        let a1 = P.axes[1];
        let o = divide(x, a0.len_magic, a0.len_shift);
        let c = x - o * a0.len;
        s = source_coord(o + a1.start, 1u);
        idx = rr.src + (a1.crop_start + s) * a1.in_stride + (a0.crop_start + c) * a0.in_stride;
    }
    return select(NONE, idx, s != NONE && rr.inside);
}

// The row walk of 8- and 16-bit elements, after narrow.wgsl and rows.wgsl; its long rows' kept words by
// one of narrow_pairs.wgsl (the default), narrow_pairs_loads_first.wgsl or narrow_spread.wgsl
// (kernel variants), which define `long_row_kept`.

// Rows of the window: a row owns the words that start in it (row 0 also the word the window
// starts in), so each word has one owner even where rows end mid-word (such rows follow each
// other in the output, so a word runs on into the next row). A row has P.row_lanes
// invocations: a row of up to a workgroup's words one a word, P.pack rows sharing a workgroup;
// a longer row up to NARROW_ROW_WORDS words an invocation (narrow.rs's `lanes`: pairs by
// default). y and z (linear) count workgroups of rows.

// A row of the row walk as the helpers of its words take it (narrow_rows sets it up): its
// first element in the binding (base) and its length; its offsets; its coordinate y on axis
// `first`, of y_len; the offsets over the axes above it, and the next block's (above_next)
// where its last word runs on into that.
struct RowContext {
    base: u32,
    len: u32,
    r: Row,
    y: u32,
    y_len: u32,
    above: Row,
    above_next: Row,
}

// The offsets of window-local position z over the axes above `first` (row_at without its
// step along `first`).
fn row_above(first: u32, z: u32) -> Row {
    let r = Row(P.in_base, P.out_base, true);
    if (first + 2u == P.rank) {
        return step(r, first + 1u, z);
    }
    return walk(r, first + 1u, z);
}

// A word of a row that is not all kept elements (pads, row ends; in a row ending mid-word,
// the next row's first elements), as (bits, mask of the bytes it writes). Its elements'
// sources (the mode function; NONE for the constant) are found first (other_sources), then
// each input word they lie in is loaded once: a the lowest source's and d the highest
// source's; with more than two elements to a word (8-bit), also b after a and c before d
// (a pad's sources and a kept run are at most two runs: wrap reads the row's other end); a
// source in none of them is read on its own (a strided input). The sources are found twice
// rather than kept in an array, which GPUs put in slow local memory.
fn other_word(w: u32, ctx: RowContext, first: u32) -> vec2<u32> {
    let s = other_sources(w, ctx, first);
    let w_lo = s.x >> EPW_LOG2;
    let w_hi = s.y >> EPW_LOG2;
    var a = 0u;
    var d = 0u;
    if (s.x != NONE) {
        a = load_src(w_lo);
        d = a;
        if (w_hi > w_lo) {
            d = load_src(w_hi);
        }
    }
    return other_assembled(w, ctx, first, s, a, d);
}

// other_word's first pass: (lowest source, highest source, mask of the bytes the word
// writes); the lowest is NONE where every element is the constant or outside the window.
fn other_sources(w: u32, ctx: RowContext, first: u32) -> vec3<u32> {
    var lo = NONE;
    var hi = 0u;
    var mask = 0u;
    for (var k = 0u; k < EPW; k++) {
        let idx = word_source(w, k, ctx, first);
        if (idx != SKIP) {
            mask |= MASK << (k * BITS);
        }
        if (idx < SKIP) {
            lo = min(lo, idx);
            hi = max(hi, idx);
        }
    }
    return vec3<u32>(lo, hi, mask);
}

// other_word's second pass, given its sources `s` and the input words a (the lowest
// source's) and d (the highest source's): loads b and c where an 8-bit word's sources lie
// between them, and assembles the word.
fn other_assembled(w: u32, ctx: RowContext, first: u32, s: vec3<u32>, a: u32, d: u32) -> vec2<u32> {
    let w_lo = s.x >> EPW_LOG2;
    let w_hi = s.y >> EPW_LOG2;
    var b = 0u;
    var c = 0u;
    // Two elements to a word (16-bit) lie in a's word and d's: nothing between.
    if (s.x != NONE && EPW > 2u) {
        if (w_hi > w_lo + 1u) {
            b = load_src(w_lo + 1u);
        }
        if (w_hi > w_lo + 2u) {
            c = load_src(w_hi - 1u);
        }
    }
    var word = 0u;
    for (var k = 0u; k < EPW; k++) {
        let idx = word_source(w, k, ctx, first);
        let wi = idx >> EPW_LOG2;
        let at = (idx & (EPW - 1u)) * BITS;
        var v = P.constant.x & MASK;
        if (idx >= SKIP) {
        } else if (wi == w_lo) {
            v = (a >> at) & MASK;
        } else if (wi == w_hi) {
            v = (d >> at) & MASK;
        } else if (wi == w_lo + 1u) {
            v = (b >> at) & MASK;
        } else if (wi + 1u == w_hi) {
            v = (c >> at) & MASK;
        } else {
            v = input_element(idx);
        }
        word |= v << (k * BITS);
    }
    return vec2<u32>(word & s.z, s.z);
}

// Outside the window: the word keeps that byte.
const SKIP: u32 = 0xfffffffeu;

// The source of element k of word w (see other_word): an input offset, NONE for the
// constant, SKIP outside the window. x is the element's position in this row, and in the
// next from len on (rows are at least a word long, so the next row is as far as a word
// reaches); it wraps below zero where the word starts in the row before.
fn word_source(w: u32, k: u32, ctx: RowContext, first: u32) -> u32 {
    if (MID_WORD && w * EPW + k - P.first >= P.elems) {
        return SKIP;
    }
    let x = w * EPW + k - ctx.base;
    if (!MID_WORD || x < ctx.len) {
        return row_source(ctx.r, x, first);
    }
    var next = ctx.above_next;
    var next_y = 0u;
    if (ctx.y + 1u < ctx.y_len) {
        next = ctx.above;
        next_y = ctx.y + 1u;
    }
    return row_source(step(next, first, next_y), x - ctx.len, first);
}

// MID_WORD (a pipeline constant): rows that end mid-word, or a window that starts mid-word:
// words run on into the next row, or keep the bytes outside the window. Rows of whole words
// compile without that code.

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // Rows ending mid-word are rare enough to share one pipeline for both row shapes: their
    // `first` is the uniform's, read through the invocation so that lavapipe cannot inline it
    // and recompile the shader at every dispatch (harmless elsewhere: one comparison with a
    // value no invocation has).
    narrow_rows(gid, nwg, select(ROW_AXES, select(P.row_first, 1u, gid.x == NONE), MID_WORD));
}

// `first` is 1 (rows along axis 0) or 2 (axis 0 a whole unpadded run of channels, rows along
// axes 0 and 1): the pipeline constant ROW_AXES for rows of whole words, so the compiler
// folds the uniform indices; the uniform's for rows ending mid-word.
fn narrow_rows(gid: vec3<u32>, nwg: vec3<u32>, first: u32) {
    let sub = divide(gid.x, P.lanes_magic, P.lanes_shift);
    let row = (gid.y + gid.z * nwg.y) * P.pack + sub;
    // Invocations past the rows write nothing: their loops below end at once. (Returning
    // here instead made every row's loop slower on lavapipe.)
    let live = sub < P.pack && row < P.count;
    let lane = gid.x - sub * P.row_lanes;
    let a0 = P.axes[0];
    let a1 = P.axes[1];
    var len = a0.len;
    if (first == 2u) {
        len *= a1.len;
    }
    // The row's coordinate y on axis `first` and position z over the axes above (that axis is
    // all zeros where there is none, and row is 0). Where the row ends mid-word and is its
    // block's last, its last word runs on into the first row of block z + 1: that block's
    // offsets come from the same call, in a loop whose count depends on the invocation. (A
    // second call would let lavapipe inline P.rank and recompile the shader at every
    // dispatch; harmless elsewhere, where the loop runs once or twice.)
    let af = P.axes[first];
    let z = divide(row, af.len_magic, af.len_shift);
    let y = row - z * af.len;
    let runs_on = MID_WORD && (P.first + (row + 1u) * len) % EPW != 0u;
    let blocks = select(1u, 2u, live && runs_on && y + 1u == af.len);
    var above = Row(0u, 0u, false);
    var above_next = Row(0u, 0u, false);
    for (var t = 0u; t < blocks; t++) {
        let b = row_above(first, z + t);
        if (t == 0u) {
            above = b;
        } else {
            above_next = b;
        }
    }
    var r = above;
    if (first < P.rank) {
        r = step(above, first, y);
    }
    // The row's first element in the binding, and the words it owns, [wa, wb).
    var base = r.dst + a0.start * a0.out_stride;
    if (first == 2u) {
        base += a1.start * a1.out_stride;
    }
    let ctx = RowContext(base, len, r, y, af.len, above, above_next);
    var wa = (base + EPW - 1u) / EPW;
    if (row == 0u) {
        wa = base / EPW;
    }
    let wb = select(wa, (base + len + EPW - 1u) / EPW, live);
    // Rows whose consecutive elements are consecutive in the input ("dense"): a word whose
    // elements are all kept is then at most two input words, shifted. Element x of such a row
    // is kept when d = x + d_off (wrapping) is below kept_elems, and is input element src0 + d.
    var dense = a0.in_stride == 1u;
    var d_off = a0.start - a0.pad_before;
    var kept_elems = a0.kept;
    var src0 = r.src + a0.crop_start;
    if (first == 2u) {
        dense = dense && a1.in_stride == a0.len;
        d_off = (a1.start - a1.pad_before) * a0.len;
        kept_elems = a1.kept * a0.len;
        src0 = r.src + a1.crop_start * a0.len + a0.crop_start;
    }
    // Words [f0, f1) of a dense row hold kept elements only, so they need no mode function
    // (every mode maps a kept position to itself): found once a row, they cost a shift per
    // word, which is what keeps long rows as fast as a copy on a real GPU (the figures:
    // ARCHITECTURE.md, "Decisions worth keeping").
    var f0 = wa;
    var f1 = wa;
    if (dense && r.inside && live) {
        // d_off is signed: below zero, the row starts in the pad before, -d_off elements of it.
        let before = d_off >= 0x80000000u;
        let first_kept = select(0u, 0u - d_off, before);
        let end_kept = min(kept_elems - select(min(d_off, kept_elems), d_off, before), len);
        f0 = clamp((base + first_kept + EPW - 1u) / EPW, wa, wb);
        f1 = max((base + end_kept) / EPW, f0);
    }
    // A row that reads no input (constant mode's pad rows): its whole words are the constant,
    // repeated, and take the same path (element by element they made a slow tail).
    if (!r.inside && live) {
        f0 = clamp((base + EPW - 1u) / EPW, wa, wb);
        f1 = max((base + len) / EPW, f0);
    }
    // Word w of [f0, f1) reads from input word i0 + w on, `shift` bits into it. i0 comes from
    // word f0's first element, a real input offset: src0 + d_off alone may wrap below zero,
    // and shifting a wrapped offset is wrong (native backends happened to wrap the address
    // back; WebGPU's clamp did not).
    let i0 = ((src0 + d_off + (f0 * EPW - base)) >> EPW_LOG2) - f0;
    let shift = ((src0 + d_off - base) & (EPW - 1u)) * BITS;
    if (P.row_lanes >= P.row_words) {
        // Rows of up to a workgroup's words: a lane a word.
        // The row's words [wa, wb), a lane each, a row's lanes apart: the lanes of a SIMD group
        // store neighbouring words (and, packed rows following each other in the output, the
        // next row's), whatever the word holds, at one store site. Kept words are shifted copies
        // (a few instructions a word: on a real GPU that, not the sectors, decides long rows);
        // the others come from other_word.
        for (var n = 0u; n < NARROW_ROW_WORDS; n++) {
            let w = wa + lane + n * P.row_lanes;
            if (w >= wb) {
                break;
            }
            // Every word's input words are loaded at two sites, kept word or not: its lowest
            // source's word, then its highest source's where that is another (a kept word:
            // i0 + w, and the next where the row is unaligned). A SIMD group's lanes then load
            // the rows' input together, each instruction over neighbouring words, where a load
            // in each branch split them (the memory model's load efficiency on f16 [1,256,7,7]
            // rose so from 0.67-0.85 to 0.74-1.00 at 32 lanes); on a GPU the divergent branches
            // no longer issue loads of their own.
            let kept = w >= f0 && w < f1;
            var s = vec3<u32>(NONE, 0u, 0xffffffffu);
            var at = i0 + w;
            var last = at + select(0u, 1u, shift != 0u);
            var reads = r.inside;
            if (!kept) {
                s = other_sources(w, ctx, first);
                at = s.x >> EPW_LOG2;
                last = s.y >> EPW_LOG2;
                reads = s.x != NONE;
            }
            var a = 0u;
            var d = 0u;
            if (reads) {
                a = load_src(at);
                d = a;
                if (last > at) {
                    d = load_src(last);
                }
            }
            var word = constant_word();
            var mask = 0xffffffffu;
            if (kept) {
                // A kept word: a shifted copy of at most two input words; or the constant.
                if (r.inside) {
                    word = shifted(a, d, shift);
                }
            } else {
                let o = other_assembled(w, ctx, first, s, a, d);
                word = o.x;
                mask = o.y;
            }
            if (!MID_WORD || mask == 0xffffffffu) {
                store_dst(w, word);
            } else {
                store_dst(w, (load_dst(w) & ~mask) | word);
            }
        }
        return;
    }
    // Longer rows (P.row_lanes lanes; narrow.rs's `lanes`): their kept words [f0, kept_end)
    // by the variant's `long_row_kept`, the rest below.
    let kept_end = long_row_kept(f0, f1, i0, shift, lane, r.inside);
    // The row's other words, a lane each: j counts them, those before f0 first. The last may
    // run on into the next row (or past the window, whose bytes it keeps).
    let kept_words = kept_end - f0;
    for (var j = lane; wa + j + kept_words < wb; j += P.row_lanes) {
        let w = select(wa + j + kept_words, wa + j, wa + j < f0);
        let o = other_word(w, ctx, first);
        if (!MID_WORD || o.y == 0xffffffffu) {
            store_dst(w, o.x);
        } else {
            store_dst(w, (load_dst(w) & ~o.y) | o.x);
        }
    }
}

// Long rows' kept words [f0, f1) of narrow_rows.wgsl (the default): a lane two neighbouring
// kept words at a time, pairs a row's lanes apart (P.row_lanes), an odd last one left to the
// row's other words; returns where the pairs end. A shifted pair reads three input words where
// two single words read four; an aligned row (shift 0) two, as the next may be past the input.
fn long_row_kept(f0: u32, f1: u32, i0: u32, shift: u32, lane: u32, inside: bool) -> u32 {
    let kept_end = f0 + ((f1 - f0) & ~1u);
    let step = P.row_lanes;
    let third = select(1u, 2u, shift != 0u);
    for (var n = 0u; n < NARROW_ROW_WORDS / 2u; n++) {
        let w = f0 + 2u * (lane + n * step);
        if (w >= kept_end) {
            break;
        }
        var lo = constant_word();
        var hi = lo;
        if (inside) {
            let a = load_src(i0 + w);
            let b = load_src(i0 + w + 1u);
            let c = load_src(i0 + w + third);
            lo = shifted(a, b, shift);
            hi = shifted(b, c, shift);
        }
        store_dst(w, lo);
        store_dst(w + 1u, hi);
    }
    return kept_end;
}
