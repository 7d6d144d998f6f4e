// A row's interior in 16-byte words (the rows16 kernel variant; src/gpu/kernels/rows16.rs).
// Output and input are bound as vec4<u32> words (WORD), elements of ELEM bytes (1, 2, 4 or 8),
// EPW16 of them a word. The window is one contiguous run of a dense output from element
// P.first of the binding, rows of P.row_words elements along the axes below P.row_first (1, or
// 2 where axis 0 is a whole unpadded run of channels); its binding holds its words whole, and
// a word only partly in the window keeps its other bytes. A word wholly inside one row's kept,
// dense interior is one or two aligned 16-byte loads and a funnel shift by the row's byte
// offset; the others go element by element. Workgroup b takes the window's words
// [b * WORKGROUP * 4, (b + 1) * WORKGROUP * 4), lane l the four at l + u * WORKGROUP, all
// loads before their stores; a lane finds its row once, by division, and then steps it.

// The u32 at `i` (in u32s) of the input binding.
fn src_u32(i: u32) -> u32 {
    let v = load_src(i >> 2u);
    return v[i & 3u];
}

// The 16 bytes from byte k (0 to 15) of the 32 bytes a, b.
fn funnel(a: vec4<u32>, b: vec4<u32>, k: u32) -> vec4<u32> {
    let q = k >> 2u;
    var p = a;
    var n = b.x;
    if (q == 1u) {
        p = vec4<u32>(a.yzw, b.x);
        n = b.y;
    } else if (q == 2u) {
        p = vec4<u32>(a.zw, b.xy);
        n = b.z;
    } else if (q == 3u) {
        p = vec4<u32>(a.w, b.xyz);
        n = b.w;
    }
    let s = (k & 3u) * 8u;
    if (s == 0u) {
        return p;
    }
    return (p >> vec4<u32>(s)) | (vec4<u32>(p.yzw, n) << vec4<u32>(32u - s));
}

// The row at window-local position `row` over the axes above `first` (its axes below at 0).
fn row16(row: u32, first: u32) -> Row {
    if (first == 1u) {
        return row_of(row);
    }
    return walk(Row(P.in_base, P.out_base, true), 2u, row);
}

// A window's rows' kept interior, the same for each row: element x of a dense row (its
// elements consecutive in the input) is kept when d = x + d_off (wrapping) is below kept, and
// is then input element r.src + crop + d.
struct Interior {
    dense: bool,
    d_off: u32,
    kept: u32,
    crop: u32,
}

fn interior(first: u32) -> Interior {
    let a0 = P.axes[0];
    if (first == 1u) {
        return Interior(a0.in_stride == 1u, a0.start - a0.pad_before, a0.kept, a0.crop_start);
    }
    let a1 = P.axes[1];
    return Interior(
        a0.in_stride == 1u && a1.in_stride == a0.len,
        (a1.start - a1.pad_before) * a0.len,
        a1.kept * a0.len,
        a1.crop_start * a0.len + a0.crop_start,
    );
}

// A lane's word: e the window-local element its first byte holds (wrapping below 0 for the
// word the window starts in), at x of row `row`, whose offsets are r (walked for `walked`).
struct Cursor16 {
    e: u32,
    x: u32,
    row: u32,
    walked: u32,
    r: Row,
}

// The cursor `step` elements on: drow rows and dx more (one carry at most, dx < the row's
// length), or afresh by division where it started before the window.
fn next16(c: Cursor16, step: u32, dx: u32, drow: u32, first: u32) -> Cursor16 {
    let len = P.row_words;
    var n = c;
    n.e += step;
    if (c.x >= len) {
        n.row = divide(n.e, P.lanes_magic, P.lanes_shift);
        n.x = n.e - n.row * len;
    } else {
        n.x += dx;
        n.row += drow;
        if (n.x >= len) {
            n.x -= len;
            n.row += 1u;
        }
    }
    if (n.row != n.walked) {
        n.walked = n.row;
        n.r = row16(n.row, first);
    }
    return n;
}

// A word's bits and the mask of the bytes it writes.
struct Word16 {
    v: vec4<u32>,
    m: vec4<u32>,
}

// The word at cursor c (nothing where !ok): wholly in its row's kept interior, a funnel shift
// of the input words its bytes lie in; else element by element.
fn word16(ok: bool, c: Cursor16, first: u32, k: Interior) -> Word16 {
    var w = Word16(vec4<u32>(0u), vec4<u32>(0u));
    if (!ok) {
        return w;
    }
    let len = P.row_words;
    let d = c.x + k.d_off;
    let whole = c.e < P.elems && c.e + EPW16 <= P.elems && c.x + EPW16 <= len;
    if (whole && k.dense && c.r.inside && d < k.kept && d + EPW16 - 1u < k.kept) {
        let s = (c.r.src + k.crop + d) * ELEM;
        let a = load_src(s >> 4u);
        var b = a;
        // An aligned word reads one input word only (the next may be past the input).
        if ((s & 15u) != 0u) {
            b = load_src((s >> 4u) + 1u);
        }
        w.v = funnel(a, b, s & 15u);
        w.m = vec4<u32>(0xffffffffu);
        return w;
    }
    // Element by element, stepping into the next rows where the word runs on into them (x
    // wraps below 0 until the word enters the window).
    var x = c.x;
    var row = c.row;
    var r = c.r;
    for (var i = 0u; i < EPW16; i++) {
        if (c.e + i < P.elems) {
            let idx = row_source(r, x, first);
            let byte = i * ELEM;
            let j = byte >> 2u;
            if (ELEM >= 4u) {
                for (var p = 0u; p < ELEM / 4u; p++) {
                    var bits = P.constant[j + p];
                    if (idx != NONE) {
                        bits = src_u32(idx * (ELEM / 4u) + p);
                    }
                    w.v[j + p] = bits;
                    w.m[j + p] = 0xffffffffu;
                }
            } else {
                let shift = (byte & 3u) * 8u;
                var bits = (P.constant[j] >> shift) & MASK;
                if (idx != NONE) {
                    let at = idx * ELEM;
                    bits = (src_u32(at >> 2u) >> ((at & 3u) * 8u)) & MASK;
                }
                w.v[j] |= bits << shift;
                w.m[j] |= MASK << shift;
            }
        }
        x += 1u;
        if (x == len) {
            x = 0u;
            row += 1u;
            r = row16(row, first);
        }
    }
    return w;
}

// Stores a word, keeping the bytes its mask leaves out.
fn store16(i: u32, w: Word16) {
    if (all(w.m == vec4<u32>(0xffffffffu))) {
        store_dst(i, w.v);
    } else {
        store_dst(i, (load_dst(i) & ~w.m) | w.v);
    }
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let first = P.row_first;
    let k = interior(first);
    let len = P.row_words;
    let i = (wid.x + wid.y * nwg.x) * (WORKGROUP * 4u) + lid;
    // The window's first word in the binding, and this lane's first word's first element.
    let w0 = P.first / EPW16;
    let e = (w0 + i) * EPW16 - P.first;
    var row = 0u;
    var x = e;
    if ((w0 + i) * EPW16 >= P.first) {
        row = divide(e, P.lanes_magic, P.lanes_shift);
        x = e - row * len;
    }
    let step = WORKGROUP * EPW16;
    let drow = divide(step, P.lanes_magic, P.lanes_shift);
    let dx = step - drow * len;
    let c0 = Cursor16(e, x, row, row, row16(row, first));
    let c1 = next16(c0, step, dx, drow, first);
    let c2 = next16(c1, step, dx, drow, first);
    let c3 = next16(c2, step, dx, drow, first);
    let ok0 = i < P.count;
    let ok1 = i + WORKGROUP < P.count;
    let ok2 = i + 2u * WORKGROUP < P.count;
    let ok3 = i + 3u * WORKGROUP < P.count;
    let v0 = word16(ok0, c0, first, k);
    let v1 = word16(ok1, c1, first, k);
    let v2 = word16(ok2, c2, first, k);
    let v3 = word16(ok3, c3, first, k);
    if (ok0) {
        store16(w0 + i, v0);
    }
    if (ok1) {
        store16(w0 + i + WORKGROUP, v1);
    }
    if (ok2) {
        store16(w0 + i + 2u * WORKGROUP, v2);
    }
    if (ok3) {
        store16(w0 + i + 3u * WORKGROUP, v3);
    }
}
