// Constant mode: a kept index's one image, the kept position.
fn list(d: u32, j: u32) -> List {
    let a = P.axes[d];
    return List(1u, 0u, a.pad_before + j, 0u, 1u, 1u);
}
