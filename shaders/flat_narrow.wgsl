// 8- and 16-bit elements on a flat grid (the flat kernel variants for narrow words;
// src/gpu/kernels/flat.rs): the window's output words (EPW elements each, the window a dense run
// from element P.first of the binding, P.count words) in blocks of WORKGROUP * FLAT_WORDS, a
// lane FLAT_WORDS of them a workgroup apart, every load before the stores (the body is
// generated unrolled: flat.rs's wgsl_body_narrow). A word whose elements are all kept and
// contiguous in one row of the input is one or two input words and a shift; any other word
// is assembled element by element. A word only partly in the window keeps its other bytes.

// A lane's position: element slot E of the window's words (E = word * EPW + k), the element
// it is (E - first % EPW, wrapping below the window's first element) as row and x, and the
// row's offsets (walked for row `walked`). x is "below zero" (wrapped, FLAT_BELOW and up)
// only in the window's first word.
struct FlatCursor {
    slot: u32,
    x: u32,
    row: u32,
    walked: u32,
    r: Row,
}

const FLAT_BELOW: u32 = 0x80000000u;

// The cursor `ds` slots on, `dx + drow * len` elements (dx < len); a cursor below the
// window (its first word's, in one lane) starts afresh instead.
fn flat_step(c: FlatCursor, ds: u32, dx: u32, drow: u32) -> FlatCursor {
    if (c.x >= FLAT_BELOW) {
        return flat_start(c.slot + ds);
    }
    let len = P.axes[0].len;
    var n = c;
    n.slot += ds;
    n.x += dx;
    n.row += drow;
    if (n.x >= len) {
        n.x -= len;
        n.row += 1u;
    }
    if (n.row != n.walked) {
        n.walked = n.row;
        n.r = row_of(n.row);
    }
    return n;
}

// The cursor one element on (x below zero stays so until it reaches zero).
fn flat_next_element(c: FlatCursor) -> FlatCursor {
    var n = c;
    n.slot += 1u;
    n.x += 1u;
    if (n.x == P.axes[0].len) {
        n.x = 0u;
        n.row += 1u;
        n.walked = n.row;
        n.r = row_of(n.row);
    }
    return n;
}

// The cursor at slot `slot` (a word's first).
fn flat_start(slot: u32) -> FlatCursor {
    let len = P.axes[0].len;
    let f0 = P.first & (EPW - 1u);
    var row = 0u;
    var x = slot - f0; // below zero (wrapped) for the first word's slots before the window
    if (slot >= f0) {
        row = divide(slot - f0, P.axes[0].len_magic, P.axes[0].len_shift);
        x = slot - f0 - row * len;
    }
    return FlatCursor(slot, x, row, row, row_of(row));
}

// The word at the cursor: (bits, mask of the bytes in the window). `ok`: the word is the
// window's.
fn flat_word(ok: bool, c: FlatCursor) -> vec2<u32> {
    let a0 = P.axes[0];
    let f0 = P.first & (EPW - 1u);
    let end = f0 + P.elems;
    // All EPW elements in the window, in one row, kept and read contiguously: one or two
    // input words and a shift.
    let o = c.x + a0.start;
    let whole = ok && c.slot >= f0 && c.slot + EPW <= end && c.x + EPW <= a0.len && c.r.inside;
    if (whole && a0.in_stride == 1u && o >= a0.pad_before && o + EPW <= a0.pad_before + a0.kept) {
        let idx = c.r.src + a0.crop_start + (o - a0.pad_before);
        let w = idx >> EPW_LOG2;
        let shift = (idx & (EPW - 1u)) * BITS;
        let lo = load_src(w);
        var hi = lo;
        if (shift != 0u) {
            hi = load_src(w + 1u);
        }
        return vec2<u32>(shifted(lo, hi, shift), 0xffffffffu);
    }
    // Element by element.
    var e = c;
    var word = 0u;
    var mask = 0u;
    for (var k = 0u; k < EPW; k++) {
        if (k > 0u) {
            e = flat_next_element(e);
        }
        if (ok && e.slot >= f0 && e.slot < end) {
            let s = source_coord(e.x + a0.start, 0u);
            var v = P.constant.x & MASK;
            if (s != NONE && e.r.inside) {
                v = input_element(e.r.src + (a0.crop_start + s) * a0.in_stride);
            }
            word |= v << (k * BITS);
            mask |= MASK << (k * BITS);
        }
    }
    return vec2<u32>(word, mask);
}

// Writes a word's bytes in the window, keeping the rest.
fn flat_store(w: u32, v: vec2<u32>) {
    if (v.y == 0xffffffffu) {
        store_dst(w, v.x);
    } else if (v.y != 0u) {
        store_dst(w, (load_dst(w) & ~v.y) | v.x);
    }
}

// The input element at offset idx (in elements) of the input binding.
fn input_element(idx: u32) -> u32 {
    return (load_src(idx >> EPW_LOG2) >> ((idx & (EPW - 1u)) * BITS)) & MASK;
}

// The word that starts `shift` bits into input word `lo` and runs on into `hi`.
fn shifted(lo: u32, hi: u32, shift: u32) -> u32 {
    return select((lo >> shift) | (hi << ((32u - shift) & 31u)), lo, shift == 0u);
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let inner = P.axes[0];
    // WORKGROUP words on: WORKGROUP * EPW slots, drow rows and dx elements.
    let ds = WORKGROUP * EPW;
    let drow = divide(ds, inner.len_magic, inner.len_shift);
    let dx = ds - drow * inner.len;
    let word = (wid.x + wid.y * nwg.x) * (WORKGROUP * FLAT_WORDS) + lid;
    let out0 = P.first >> EPW_LOG2;
    var c = flat_start(word * EPW);
//FLAT_BODY
}
