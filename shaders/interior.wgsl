// Interior padding (JAX's lax.pad), constant mode, its own kernel (src/gpu/kernels/interior.rs,
// laid out by src/gpu/interior.rs): one invocation per output word, as the design card has it.
// Each axis of P.axes (innermost first) keeps input elements crop_start, crop_start + 1, ...,
// landing from output pad_before on every `period` places (the interior count plus one) over
// `kept` places; every other output element is the constant.

// The rank as the loop reads it: P.rank plus a zero no compiler can see through (the grid's
// z, set by `main`: every grid is one deep). Lavapipe (Mesa 22) would otherwise compile the
// shader again at every dispatch with the rank inlined, and never free it (examples/driver_recompiles.rs shows it).
var<private> grid_z: u32;

// Output element e (row-major over the output's shape): the input element it reads, in
// elements from element 0 (NONE for the constant), and its place in the output view.
fn interior_source(e_in: u32) -> vec2<u32> {
    var e = e_in;
    var src_at = 0u;
    var dst_at = 0u;
    var inside = true;
    let rank = P.rank + grid_z;
    for (var d = 0u; d < rank; d++) {
        let a = P.axes[d];
        var c = e;
        if (d + 1u < rank) {
            e = divide(c, a.len_magic, a.len_shift);
            c -= e * a.len;
        }
        // j wraps below the first kept place, so `j < kept` holds only inside.
        let j = c - a.pad_before;
        let k = divide(j, a.period_magic, a.period_shift);
        inside = inside && j < a.kept && k * a.period == j;
        src_at += (a.crop_start + k) * a.in_stride;
        dst_at += c * a.out_stride;
    }
    return vec2<u32>(select(NONE, src_at, inside), dst_at);
}
