export { philox4x32, mulhi32, type PhiloxKey, type PhiloxCounter } from './philox';
export { randomBits, uniform24, bernoulliThreshold, bernoulli, type StreamId } from './stream';
