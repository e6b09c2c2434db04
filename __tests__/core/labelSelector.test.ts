// `node-selector` parsed and matched as the apiserver does for `kubectl get nodes -l` (k8s.io/apimachinery
// pkg/labels/selector.go): the run lists every node once and picks the selection out of that listing.
import { describe, expect, it } from 'vitest';
import { matchesLabels, parseLabelSelector } from '../../src/core/labelSelector.js';

const matches = (selector: string, labels: Record<string, string>) => matchesLabels(parseLabelSelector(selector), labels);

describe('parseLabelSelector', () => {
  it('every requirement form, whitespace between tokens, set values sorted and empty members kept', () => {
    expect(
      parseLabelSelector(' pool = blue , tier==web,zone!=a, spot , !gpu ,x in (b,a), y notin (),z in (in,), n>2,m<10').requirements,
    ).toEqual([
      { key: 'pool', operator: '=', values: ['blue'] },
      { key: 'tier', operator: '==', values: ['web'] },
      { key: 'zone', operator: '!=', values: ['a'] },
      { key: 'spot', operator: 'exists', values: [] },
      { key: 'gpu', operator: 'doesNotExist', values: [] },
      { key: 'x', operator: 'in', values: ['a', 'b'] },
      { key: 'y', operator: 'notin', values: [''] },
      { key: 'z', operator: 'in', values: ['', 'in'] },
      { key: 'n', operator: '>', values: ['2'] },
      { key: 'm', operator: '<', values: ['10'] },
    ]);
    expect(parseLabelSelector('node-role.kubernetes.io/control-plane,pool=').requirements).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', operator: 'exists', values: [] },
      { key: 'pool', operator: '=', values: [''] },
    ]);
    expect(parseLabelSelector('   ').requirements).toEqual([]);
  });

  it.each([
    ['=blue', "found '=', expected: !, identifier, or 'end of string'"],
    ['pool in blue', "unable to parse requirement: found 'blue' expected: '('"],
    ['pool=blue green', "found 'green', expected: ',' or 'end of string'"],
    ['pool=blue,', "found '', expected: identifier after ','"],
    ['pool blue', "unable to parse requirement: found 'blue', expected: in, notin, =, ==, !=, gt, lt"],
    ['!pool=blue', "found '=', expected: ',' or 'end of string'"],
    ['-pool=blue', 'unable to parse requirement: key: Invalid value: "-pool": name part must consist of alphanumeric'],
    ['Example.com/pool=blue', 'prefix part a lowercase RFC 1123 subdomain'],
    ['pool=blue_', 'unable to parse requirement: values[0][pool]: Invalid value: "blue_": a valid label must consist of alphanumeric'],
    ['size>big', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (a,,)', "unable to parse requirement: found ')', expected: ',', or identifier"],
  ])('refuses %j as the apiserver does', (selector, message) => {
    expect(() => parseLabelSelector(selector)).toThrow(message);
  });
});

describe('matchesLabels', () => {
  const blue = { pool: 'blue', size: '4', 'node-role.kubernetes.io/control-plane': '' };
  it('equality, inequality and sets; a missing key matches only !=, notin and !key', () => {
    expect(matches('pool=blue', blue)).toBe(true);
    expect(matches('pool==green', blue)).toBe(false);
    expect(matches('pool!=green,zone!=a', blue)).toBe(true);
    expect(matches('pool in (green,blue)', blue)).toBe(true);
    expect(matches('zone notin (a)', blue)).toBe(true);
    expect(matches('zone in (a)', blue)).toBe(false);
    expect(matches('node-role.kubernetes.io/control-plane', blue)).toBe(true);
    expect(matches('!node-role.kubernetes.io/control-plane', blue)).toBe(false);
    expect(matches('node-role.kubernetes.io/control-plane=', blue)).toBe(true);
    expect(matches('', blue)).toBe(true);
  });

  it('gt and lt compare integers; a label that is not one never matches', () => {
    expect(matches('size>3', blue)).toBe(true);
    expect(matches('size<4', blue)).toBe(false);
    expect(matches('pool>1', blue)).toBe(false);
    expect(matches('zone<1', blue)).toBe(false);
  });
});
