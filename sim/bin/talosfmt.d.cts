// Types for talosfmt.cjs (plain CommonJS so the fake talosctl starts without compiling anything).
export declare function agoMark(tsMs: number): string;
export declare function lsTimeMark(unixSec: number): string;
export declare function goDurationSeconds(totalSeconds: number): string;
export declare function roundToSecond(ms: number): number;
export declare function agoText(tsMs: number, nowMs: number): string;
export declare function lsTimeText(unixSec: number, nowMs: number, tz?: string): string;
export declare function humanizeTimeMark(unixSec: number): string;
export declare function humanizeTimeText(unixSec: number, nowMs: number): string;
export declare function resolveMarks(text: string, nowMs: number, tz?: string): string;
export declare function tabwrite(text: string, padding?: number): string;
export declare function runeCount(s: string): number;
export declare function zoneRenderable(tz: string | undefined): boolean;
