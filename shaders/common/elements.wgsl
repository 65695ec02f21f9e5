// The item count and workgroup size of a kernel with one invocation per
// element: params.count of them, 256 per workgroup. WGSL has no include:
// client/gpu/kernels/common.ts (withElements) appends this and grid.wgsl to
// a kernel that declares
//   var<uniform> params                 whose struct has `count: u32`
//   fn item(i: u32)                     the work of element i

override WORKGROUP_SIZE: u32 = 256u;

fn itemCount() -> u32 {
  return params.count;
}
