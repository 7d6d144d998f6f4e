//! What was measured: the adapter, the host, the build and the command, for the JSON's
//! top-level `machine` object and the table's one-line summary.

use serde::{Deserialize, Serialize};
use wgpu_pad::gpu::GpuContext;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Machine {
    pub adapter: String,
    pub vendor: String,
    pub device_type: String,
    pub driver: String,
    pub backend: String,
    pub wgpu_version: String,
    /// The limits that shape a pad's program: storage binding, buffer, workgroups.
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub timestamp_queries: bool,
    pub cpu: String,
    pub cores: usize,
    pub os: String,
    pub rustc: Option<String>,
    pub crate_version: String,
    pub git_commit: Option<String>,
    pub command: String,
    pub time: String,
    /// The kernel variant the GPU pads ran (`--kernel-variant`); reports from before the
    /// variants ran the default.
    #[serde(default = "default_variant")]
    pub kernel_variant: String,
}

fn default_variant() -> String {
    "default".into()
}

impl Machine {
    pub fn of(ctx: &GpuContext) -> Machine {
        let info = ctx.adapter_info();
        let limits = ctx.device().limits();
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let os = match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
            Ok(release) => format!("{} {}", std::env::consts::OS, release.trim()),
            Err(_) => std::env::consts::OS.to_string(),
        };
        let run = |cmd: &str, args: &[&str]| {
            std::process::Command::new(cmd)
                .args(args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        Machine {
            adapter: info.name.clone(),
            vendor: format!("{:#06x}", info.vendor),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
            backend: format!("{:?}", info.backend),
            wgpu_version: wgpu_version(),
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            timestamp_queries: ctx.device().features().contains(wgpu::Features::TIMESTAMP_QUERY),
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os,
            rustc: run("rustc", &["--version"]),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            // The build's commit where the build recorded it (a binary carried to another
            // machine runs in a checkout that may be at another commit), else the working
            // directory's.
            git_commit: option_env!("WGPU_PAD_BUILD_COMMIT")
                .map(String::from)
                .or_else(|| run("git", &["rev-parse", "HEAD"])),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            time: now_utc(),
            kernel_variant: wgpu_pad::gpu::measurement::selected(ctx.kernel()).name().to_string(),
        }
    }

    /// One line for the table's head.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}, {}, {}) | {} x{} | {} | wgpu {} | {} at {} | kernel variant {}",
            self.adapter,
            self.backend,
            self.device_type,
            self.driver,
            self.cpu,
            self.cores,
            self.os,
            self.wgpu_version,
            self.git_commit.as_deref().map_or("no git commit", |c| &c[..c.len().min(10)]),
            self.time,
            self.kernel_variant
        )
    }

    /// What differs between two runs' machines, for the comparison's warning.
    pub fn differences(&self, other: &Machine) -> Vec<String> {
        let mut d = Vec::new();
        for (name, a, b) in [
            ("adapter", &self.adapter, &other.adapter),
            ("backend", &self.backend, &other.backend),
            ("driver", &self.driver, &other.driver),
            ("cpu", &self.cpu, &other.cpu),
            ("os", &self.os, &other.os),
        ] {
            if a != b {
                d.push(format!("{name}: {a:?} vs {b:?}"));
            }
        }
        if self.cores != other.cores {
            d.push(format!("cores: {} vs {}", self.cores, other.cores));
        }
        d
    }
}

/// wgpu's version, as the lockfile this was built with records it: the entry of the major
/// the crate's manifest asks for (the lockfile also holds the wgpu 29 host's).
fn wgpu_version() -> String {
    locked_version(include_str!("../../Cargo.toml"), include_str!("../../Cargo.lock"))
        .unwrap_or_else(|| "unknown".to_string())
}

fn locked_version(manifest: &str, lock: &str) -> Option<String> {
    let major = manifest.lines().find_map(|l| l.strip_prefix("wgpu = { version = \""))?.split('"').next()?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"wgpu\"" {
            let v = lines.next()?.strip_prefix("version = \"")?.trim_end_matches('"');
            if v.split('.').next() == Some(major) {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// The current time in UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    /// The wgpu the harness links (the manifest's major), not the first in the lockfile.
    #[test]
    fn the_wgpu_version_is_the_linked_one() {
        let lock = "[[package]]\nname = \"wgpu\"\nversion = \"29.0.4\"\n\n[[package]]\nname = \"wgpu\"\nversion = \"30.0.1\"\n";
        let manifest = "[dependencies]\nwgpu = { version = \"30\", default-features = false }\n";
        assert_eq!(super::locked_version(manifest, lock).as_deref(), Some("30.0.1"));
        assert!(super::wgpu_version().starts_with("30."), "{}", super::wgpu_version());
    }
}
