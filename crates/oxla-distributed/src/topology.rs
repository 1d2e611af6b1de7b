//! What each process tells the others about its devices, and the job's
//! device list assembled from all of them (JAX's `jax.devices()` over
//! processes): processes in id order, each one's devices in its local
//! order, numbered from 0.

use serde::{Deserialize, Serialize};

use crate::error::{DistributedError, Result};

/// One device as its process sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalDevice {
    /// The plugin's id of the device in its process.
    pub id: i64,
    /// The plugin's kind ("cpu", "NVIDIA H100 80GB HBM3", ...).
    pub kind: String,
}

/// A process's devices and platform, as published to the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessTopology {
    /// The process's id in the job.
    pub process_id: usize,
    /// The platform its client runs (`cpu`, `cuda`, ...).
    pub platform: String,
    /// The platform's version string.
    pub platform_version: String,
    /// Its addressable devices, in local order.
    pub devices: Vec<LocalDevice>,
}

/// One device of the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalDevice {
    /// The device's id in the job (process-major order).
    pub id: usize,
    /// The process that can address it.
    pub process_index: usize,
    /// The plugin's id of the device in that process.
    pub local_id: i64,
    /// The plugin's kind of device.
    pub kind: String,
}

/// The job's devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalTopology {
    /// The platform every process runs.
    pub platform: String,
    /// Every process's devices, numbered process-major.
    pub devices: Vec<GlobalDevice>,
}

impl GlobalTopology {
    /// The job's topology from every process's (in process order): an
    /// error when a process is missing or repeated, or when they run
    /// different platforms or platform versions (their programs would not
    /// agree).
    pub fn assemble(job: &str, processes: &[ProcessTopology]) -> Result<GlobalTopology> {
        let disagree = |message: String| DistributedError::Disagreement {
            job: job.to_string(),
            message,
        };
        let first = processes
            .first()
            .ok_or_else(|| disagree("no process published a topology".into()))?;
        let mut devices = Vec::new();
        for (index, process) in processes.iter().enumerate() {
            if process.process_id != index {
                return Err(disagree(format!(
                    "topology number {index} came from process {}",
                    process.process_id
                )));
            }
            if (&process.platform, &process.platform_version)
                != (&first.platform, &first.platform_version)
            {
                return Err(disagree(format!(
                    "process 0 runs {} {} but process {index} runs {} {}",
                    first.platform,
                    first.platform_version,
                    process.platform,
                    process.platform_version
                )));
            }
            if process.devices.is_empty() {
                return Err(disagree(format!("process {index} has no devices")));
            }
            for device in &process.devices {
                devices.push(GlobalDevice {
                    id: devices.len(),
                    process_index: index,
                    local_id: device.id,
                    kind: device.kind.clone(),
                });
            }
        }
        Ok(GlobalTopology {
            platform: first.platform.clone(),
            devices,
        })
    }

    /// The devices process `process_index` can address.
    pub fn local_devices(&self, process_index: usize) -> impl Iterator<Item = &GlobalDevice> {
        self.devices
            .iter()
            .filter(move |d| d.process_index == process_index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(process_id: usize, platform: &str, n: i64) -> ProcessTopology {
        ProcessTopology {
            process_id,
            platform: platform.into(),
            platform_version: "1".into(),
            devices: (0..n)
                .map(|id| LocalDevice {
                    id,
                    kind: "cpu".into(),
                })
                .collect(),
        }
    }

    #[test]
    fn devices_are_numbered_process_major() {
        let t =
            GlobalTopology::assemble("j", &[process(0, "cpu", 2), process(1, "cpu", 3)]).unwrap();
        let ids: Vec<(usize, usize, i64)> = t
            .devices
            .iter()
            .map(|d| (d.id, d.process_index, d.local_id))
            .collect();
        assert_eq!(ids, [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1), (4, 1, 2)]);
        assert_eq!(t.local_devices(1).count(), 3);
    }

    #[test]
    fn mixed_platforms_or_misordered_processes_are_refused() {
        let err = GlobalTopology::assemble("j", &[process(0, "cpu", 1), process(1, "cuda", 1)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("process 0 runs cpu 1 but process 1 runs cuda 1"),
            "{err}"
        );
        let err = GlobalTopology::assemble("j", &[process(1, "cpu", 1)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("topology number 0 came from process 1"),
            "{err}"
        );
        let err = GlobalTopology::assemble("j", &[process(0, "cpu", 0)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("process 0 has no devices"), "{err}");
    }
}
