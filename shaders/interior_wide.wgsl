// 32-, 64- and 128-bit elements: ELEM_WORDS u32 words each, an invocation a word; any strides.
// P.in_base and P.out_base are in words here.
@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    grid_z = gid.z;
    let t = gid.x + gid.y * groups.x * WORKGROUP;
    if (t >= P.count) {
        return;
    }
    let e = t / ELEM_WORDS;
    let part = t - e * ELEM_WORDS;
    let s = interior_source(e);
    var v = P.constant[part];
    if (s.x != NONE) {
        v = load_src(P.in_base + s.x * ELEM_WORDS + part);
    }
    store_dst(P.out_base + s.y * ELEM_WORDS + part, v);
}
