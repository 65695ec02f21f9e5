import { describe, expect, it } from 'vitest';
import {
  FrameMeter,
  downlinkBytes,
  parseSocketIoPacket,
  totalBytes,
  uplinkBytes,
  utf8Length,
  webSocketFrameBytes,
} from './frames';

describe('webSocketFrameBytes', () => {
  it('adds RFC 6455 header sizes at the 126 and 65536 boundaries, and the mask for client frames', () => {
    expect(webSocketFrameBytes(125, false)).toBe(127);
    expect(webSocketFrameBytes(126, false)).toBe(130);
    expect(webSocketFrameBytes(65_535, false)).toBe(65_539);
    expect(webSocketFrameBytes(65_536, false)).toBe(65_546);
    expect(webSocketFrameBytes(10, true)).toBe(16);
  });
});

describe('utf8Length', () => {
  it('counts 1-, 2-, 3- and 4-byte code points', () => {
    expect(utf8Length('a')).toBe(1);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('简')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
    expect(utf8Length('a简😀')).toBe(new TextEncoder().encode('a简😀').length);
  });
});

describe('parseSocketIoPacket', () => {
  it('reads the event of plain and binary events, with ack ids and namespaces', () => {
    expect(parseSocketIoPacket('2["metrics:round",{}]')).toEqual({ event: 'metrics:round', attachments: 0 });
    expect(parseSocketIoPacket('53-12["gradient:submit",{"layers":[]}]')).toEqual({
      event: 'gradient:submit',
      attachments: 3,
    });
    expect(parseSocketIoPacket('2/admin,7["run:start",{}]')).toEqual({ event: 'run:start', attachments: 0 });
    expect(parseSocketIoPacket('312[{"ok":true}]')).toEqual({ event: null, attachments: 0 });
    expect(parseSocketIoPacket('62-4[{"ok":true}]')).toEqual({ event: null, attachments: 2 });
  });
});

describe('FrameMeter', () => {
  it('puts a binary event and its attachments in one category, and everything else in control', () => {
    const meter = new FrameMeter();
    const header = '52-["round:open",{"layers":[{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]}]';
    meter.record('down', { type: 'message', data: header });
    meter.record('down', { type: 'message', data: new Uint8Array(200) });
    meter.record('down', { type: 'message', data: new Uint8Array(70_000) });
    meter.record('down', { type: 'ping' });
    meter.record('up', { type: 'pong' });
    meter.record('up', { type: 'message', data: '51-0["gradient:submit",{"layers":[{"_placeholder":true,"num":0}]}]' });
    meter.record('up', { type: 'message', data: new Uint8Array(300) });
    meter.record('up', { type: 'message', data: '30[{"ok":true}]' });
    const t = meter.traffic;
    expect(t.modelDown).toBe(
      webSocketFrameBytes(1 + header.length, false) +
        webSocketFrameBytes(200, false) +
        webSocketFrameBytes(70_000, false),
    );
    expect(t.controlDown).toBe(webSocketFrameBytes(1, false));
    expect(t.gradientUp).toBe(webSocketFrameBytes(1 + 66, true) + webSocketFrameBytes(300, true));
    expect(t.controlUp).toBe(webSocketFrameBytes(1, true) + webSocketFrameBytes(1 + 15, true));
    expect(uplinkBytes(t) + downlinkBytes(t)).toBe(totalBytes(t));
  });

  it('counts each text by its own UTF-8 length when the same and different texts alternate across meters', () => {
    const texts = [
      '42["metrics:round",{"a":"简"}]',
      '42["metrics:round",{"a":"😀"}]',
      '42["metrics:round",{"a":"ab"}]',
    ];
    const meters = [new FrameMeter(), new FrameMeter()];
    const expected = [0, 0];
    for (const [k, i] of [0, 0, 1, 1, 0, 2, 2, 1].entries()) {
      // A copy with the same characters but another identity, every other time.
      const text = k % 2 === 0 ? texts[i]! : [...texts[i]!].join('');
      meters[k % 2]!.record('down', { type: 'message', data: text });
      expected[k % 2]! += webSocketFrameBytes(1 + new TextEncoder().encode(text).length, false);
    }
    expect(meters.map((m) => m.traffic.controlDown)).toEqual(expected);
  });
});
