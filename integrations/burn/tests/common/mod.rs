//! What the adapter's test files share: Burn's wgpu device, made by Burn, and a pad on it.

use burn::tensor::wgpu::wgpu;
use burn::tensor::Device;
use wgpu_pad_burn::BurnPad;

/// Burn's wgpu device and a pad on it; `None` (skip) without an adapter, unless
/// `WGPU_PAD_REQUIRE_GPU` is set (CI), which makes that a failure.
pub fn device_and_pad() -> Option<(Device, BurnPad)> {
    // Burn's adapter search panics where there is none; ask wgpu first.
    let instance = wgpu::Instance::default();
    if pollster::block_on(instance.request_adapter(&Default::default())).is_err() {
        assert!(std::env::var_os("WGPU_PAD_REQUIRE_GPU").is_none(), "WGPU_PAD_REQUIRE_GPU is set and no adapter");
        eprintln!("no GPU adapter: skipping");
        return None;
    }
    let (device, setup) = Device::wgpu_options().init_with_setup().expect("Burn's wgpu device");
    let pad = BurnPad::new(&device, &setup).expect("a pad on Burn's device");
    Some((device, pad))
}
