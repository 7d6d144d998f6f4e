// Wide words on a flat grid (src/gpu/kernels/flat.rs): the roofline copy's shape. Workgroup b
// takes the window's elements [b * WORKGROUP * FLAT_WORDS, (b + 1) * WORKGROUP * FLAT_WORDS),
// rows running on into the next; lane l the FLAT_WORDS of them at l + u * WORKGROUP, all
// loads before the stores (`main` is generated, its body unrolled: flat.rs's wgsl_main). On the
// device grid (its own main), a lane's elements are the whole grid's lanes apart, FLAT_WORDS
// a round. Any strides on either side.

// A lane's position: flat index i, its row and x in the row, and the row's offsets (walked
// for row `walked`).
struct FlatCursor {
    i: u32,
    x: u32,
    row: u32,
    walked: u32,
    r: Row,
}

// The cursor step elements on: drow whole rows and dx more (one carry at most, dx < len).
fn flat_next(c: FlatCursor, step: u32, dx: u32, drow: u32) -> FlatCursor {
    let len = P.axes[0].len;
    var n = c;
    n.i += step;
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

// The output word the cursor is at.
fn flat_dst(c: FlatCursor) -> u32 {
    let inner = P.axes[0];
    return c.r.dst + (c.x + inner.start) * inner.out_stride;
}

// Its value: the input word it reads, or the constant (nothing loaded past the window).
fn flat_load(ok: bool, c: FlatCursor) -> WORD {
    let inner = P.axes[0];
    let k = source_coord(c.x + inner.start, 0u);
    var v = constant_word();
    if (ok && k != NONE && c.r.inside) {
        v = load_src(c.r.src + (inner.crop_start + k) * inner.in_stride);
    }
    return v;
}
