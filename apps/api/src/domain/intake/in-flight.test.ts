import { describe, expect, it } from 'vitest';
import { ApiError } from '../../errors.ts';
import { InFlight, inFlightWeight } from './in-flight.ts';

const MIB = 1024 * 1024;

describe('sends in flight', () => {
  it('weighs a send by its declared length, the whole limit without one, and at least 64 KiB', () => {
    expect(inFlightWeight('1000000')).toBe(1_000_000);
    expect(inFlightWeight('10')).toBe(64 * 1024);
    expect(inFlightWeight(undefined)).toBe(16 * MIB);
    expect(inFlightWeight('abc')).toBe(16 * MIB);
    expect(inFlightWeight(String(64 * MIB))).toBe(16 * MIB);
  });

  it('refuses past the sink\'s share and the process\'s, and frees a place once', () => {
    const flight = new InFlight({ processBytes: 40 * MIB, sinkBytes: 32 * MIB });
    const first = flight.enter('a', 16 * MIB);
    flight.enter('a', 16 * MIB);
    expect(() => flight.enter('a', 1)).toThrow(ApiError);
    const other = flight.enter('b', 8 * MIB);
    expect(() => flight.enter('b', 1)).toThrowError(expect.objectContaining({ code: 'intake_busy', details: expect.objectContaining({ limit: 'process' }) }));
    first();
    first();
    expect(flight.bytes).toBe(24 * MIB);
    flight.enter('a', 16 * MIB);
    other();
    expect(flight.bytes).toBe(32 * MIB);
  });

  it('always lets a send in where nothing else is in flight, however large', () => {
    const flight = new InFlight({ processBytes: MIB, sinkBytes: MIB });
    const leave = flight.enter('a', 16 * MIB);
    expect(() => flight.enter('b', 1)).toThrow(ApiError);
    leave();
    expect(flight.bytes).toBe(0);
  });

  it('lets a send grow past the caps when only its own bytes are in flight, and not when another\'s are', () => {
    const flight = new InFlight({ processBytes: 64 * MIB, sinkBytes: MIB });
    flight.enter('a', 64 * 1024);
    flight.enter('a', 4 * MIB, 64 * 1024);
    expect(flight.bytes).toBe(4 * MIB + 64 * 1024);
    flight.enter('b', 64 * 1024);
    flight.enter('b', 64 * 1024);
    expect(() => flight.enter('b', 4 * MIB, 64 * 1024)).toThrowError(expect.objectContaining({ code: 'intake_busy', details: expect.objectContaining({ limit: 'sink' }) }));
  });
});
