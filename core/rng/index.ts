export { philox4x32, philox4x32Words, mulhi32, type PhiloxKey, type PhiloxCounter } from './philox';
export { randomBits, uniform24, bernoulliThreshold, bernoulli, type StreamId } from './stream';
