// The frame of every kernel that gives one workgroup to each record of a job
// table: workgroup j runs runJob(jobs[j], tid), tid being the invocation's
// index in the workgroup (the host dispatches one workgroup per job along x).
// WGSL has no include: client/gpu/kernels/common.ts (withJobs) appends this
// to a kernel that declares
//   struct Job { … }                                   one job's record
//   @group(0) @binding(0) var<storage, read> jobs: array<Job>;
//   override WORKGROUP_SIZE: u32 = …;                  invocations per workgroup
//   fn runJob(job: Job, tid: u32)                      the work of one job

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  runJob(jobs[wid.x], tid);
}
