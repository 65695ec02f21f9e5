/** Schemas of what crosses a trust boundary (teacher input, checkpoints), and the types derived from them. */
export * from './runConfig';
export * from './checkpoint';
export * from './attack';
