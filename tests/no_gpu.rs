//! With no adapter to be had, the GPU entry points return NoGpu (own process: it sets
//! WGPU_ADAPTER_NAME, read by GpuContext::new).

use wgpu_pad::gpu::GpuContext;
use wgpu_pad::PadError;

#[test]
fn no_matching_adapter_is_an_error() {
    std::env::set_var("WGPU_ADAPTER_NAME", "no-such-adapter-anywhere");
    let e = GpuContext::new_blocking().err().expect("no adapter matches");
    assert!(matches!(e, PadError::NoGpu { .. }), "{e:?}");
    assert!(e.to_string().contains("no-such-adapter-anywhere"), "{e}");
}
