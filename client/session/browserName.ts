/** A short browser name for the teacher's workers table ("Chrome", "Firefox", ...). */
export function browserName(userAgent: string = navigator.userAgent): string {
  if (/Edg\//.test(userAgent)) return 'Edge';
  if (/Firefox\//.test(userAgent)) return 'Firefox';
  if (/Chrom(e|ium)\//.test(userAgent)) return 'Chrome';
  if (/Safari\//.test(userAgent)) return 'Safari';
  return 'Browser';
}
