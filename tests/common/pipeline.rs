//! The one way the tests, the encode bench and the embed example build a compute pipeline of
//! their own WGSL: entry point `main`, the layout wgpu derives from the shader (bind group 0
//! read back with `get_bind_group_layout(0)`).

/// A compute pipeline of `wgsl`'s `main`, its layout derived from the shader.
pub fn compute_pipeline(device: &wgpu::Device, wgsl: &str) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}
