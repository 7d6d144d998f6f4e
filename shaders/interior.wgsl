// Interior padding (JAX's lax.pad), constant mode, its own kernel (src/gpu/kernels/interior.rs,
// laid out by src/gpu/interior.rs): one invocation per output word, as the design card has it.
// Each axis of P.axes (innermost first: InteriorAxis, src/gpu/params.rs) keeps input elements
// in_first, in_first + 1, ..., landing from output place `first` on every `step` places (the
// interior count plus one) within `span` places; every other output element is the constant.

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
        // j wraps below the first landed place, so `j < span` holds only inside.
        let j = c - a.first;
        let k = divide(j, a.step_magic, a.step_shift);
        inside = inside && j < a.span && k * a.step == j;
        src_at += (a.in_first + k) * a.in_stride;
        dst_at += c * a.out_stride;
    }
    return vec2<u32>(select(NONE, src_at, inside), dst_at);
}
