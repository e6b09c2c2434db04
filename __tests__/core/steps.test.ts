import { describe, expect, it } from 'vitest';
import { STEP, verifiedImageOf, verifyImageStep } from '../../src/core/steps.js';

describe('the verify-image step name', () => {
  it('gives back the image it was built from, an image with spaces or "through" in it too', () => {
    for (const image of ['ghcr.io/acme/app:1.2', 'registry.example.com:5000/a/b@sha256:abc', 'odd through containerd image'])
      expect(verifiedImageOf(verifyImageStep(image))).toBe(image);
  });

  it('is no other step', () => {
    for (const name of Object.values(STEP)) expect(verifiedImageOf(name)).toBeUndefined();
    expect(verifiedImageOf('verify something else')).toBeUndefined();
  });
});
