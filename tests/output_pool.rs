//! Large outputs reuse the buffers of dropped tensors (the output pool): in their own test
//! binary, since the pool is the process's and other tests would take from it.

use wgpu_pad::{cpu, reference, DataType, Mode, PadPlan, PadRequest, Tensor};

#[test]
fn large_outputs_reuse_dropped_buffers_and_write_every_byte() {
    wgpu_pad::set_output_pool_limit(wgpu_pad::DEFAULT_OUTPUT_POOL_BYTES);
    wgpu_pad::release_output_pool();
    assert_eq!(wgpu_pad::output_pool_bytes(), 0);

    // 20 MiB of junk, dropped: kept.
    let n = 20 << 20;
    let junk = Tensor::from_bytes(DataType::Uint8, vec![n], vec![0xAA; n]).unwrap();
    let junk_at = junk.bytes().unwrap().as_ptr();
    drop(junk);
    assert!(wgpu_pad::output_pool_bytes() >= n as u64);

    // Outputs of exactly that size land on it, junk and then each other's bytes, and still
    // come out as the reference's (constant 0 included: nothing relies on zeroed memory).
    let shape = [1024, 20476];
    let x = Tensor::from_bytes(DataType::Uint8, shape.to_vec(), (0..1024 * 20476).map(|i| (i % 253) as u8).collect())
        .unwrap();
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let plan = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(vec![0, 2, 0, 2]).mode(mode)).unwrap();
        let y = cpu::pad(&plan, &x).unwrap();
        if i == 0 {
            assert_eq!(y.bytes().unwrap().as_ptr(), junk_at, "the dropped buffer was not reused");
        }
        // The reference's output and this one go to the pool when dropped: the next mode
        // lands on one of them.
        assert!(y == reference::pad(&plan, &x), "{mode} on a reused buffer");
    }
    wgpu_pad::release_output_pool();

    // Within the limit, oldest out first; none at 0; released on request.
    let big = |b: u8| Tensor::from_bytes(DataType::Uint8, vec![n], vec![b; n]).unwrap();
    wgpu_pad::set_output_pool_limit(30 << 20);
    drop((big(1), big(2)));
    assert_eq!(wgpu_pad::output_pool_bytes(), n as u64, "two 20 MiB buffers kept under a 30 MiB limit");
    wgpu_pad::release_output_pool();
    assert_eq!(wgpu_pad::output_pool_bytes(), 0);
    wgpu_pad::set_output_pool_limit(0);
    drop(big(3));
    assert_eq!(wgpu_pad::output_pool_bytes(), 0);
    // Small buffers are left to the allocator.
    wgpu_pad::set_output_pool_limit(wgpu_pad::DEFAULT_OUTPUT_POOL_BYTES);
    drop(Tensor::from_bytes(DataType::Uint8, vec![1 << 20], vec![0; 1 << 20]).unwrap());
    assert_eq!(wgpu_pad::output_pool_bytes(), 0);
    // A tensor's data taken out is the caller's, not the pool's.
    let data = big(4).into_data();
    assert_eq!(wgpu_pad::output_pool_bytes(), 0);
    drop(data);
}
