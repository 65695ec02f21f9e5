// The frame of every kernel that gives one invocation to each of its items:
// item i < itemCount() runs item(i), on a 2-D grid of 1-D workgroups so that
// there may be more than 65535 groups (x fastest; the host sizes the grid
// from the same WORKGROUP_SIZE, read from the pipeline cache:
// client/gpu/runtime/dispatch.ts, gridForItems). WGSL has no include:
// client/gpu/kernels/common.ts (withGrid) appends this to a kernel that
// declares
//   override WORKGROUP_SIZE: u32 = …;   invocations per workgroup
//   fn itemCount() -> u32               how many items there are
//   fn item(i: u32)                     the work of item i

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * WORKGROUP_SIZE;
  if (i < itemCount()) {
    item(i);
  }
}
