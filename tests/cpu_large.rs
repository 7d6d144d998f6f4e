//! The CPU path on outputs large enough to be split across threads (4 MiB and more), in
//! every mode, against the per-element reference; the property tests stay below that size.

use wgpu_pad::{cpu, reference, DataType, Mode, PadPlan, PadRequest, Tensor};

fn check(dtype: DataType, shape: &[usize], pads: &[i64]) {
    let n: usize = shape.iter().product::<usize>() * dtype.width().bytes().unwrap();
    let x = Tensor::from_bytes(dtype, shape.to_vec(), (0..n).map(|i| (i * 7 % 251) as u8).collect()).unwrap();
    for mode in Mode::ALL {
        let plan = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap();
        assert!(plan.byte_sizes().unwrap().1 >= 4 << 20, "too small to be split");
        let got = cpu::pad(&plan, &x).unwrap();
        assert!(got == reference::pad(&plan, &x), "{dtype} {shape:?} {pads:?} {mode}");
    }
}

#[test]
fn threaded_outputs_match_the_reference() {
    // Threaded on any machine, one core included (this binary's only test).
    cpu::set_max_threads(4);
    // An odd number of outer blocks (uneven split), cropping and padding on the split axis.
    check(DataType::Float32, &[7, 400, 400], &[-1, -1, 3, 2, 2, 2]);
    // Past 16 MiB, the size the speed targets speak of.
    check(DataType::Float32, &[5, 1000, 1003], &[1, -2, 3, 0, 2, 1]);
    // Bytes with an unpadded channel run folded into the chunk.
    check(DataType::Uint8, &[3, 700, 700, 3], &[0, 3, 2, 0, 1, 4, 1, 0]);
}
