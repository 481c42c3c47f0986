/** Report: the HTML report, the doctor's troubleshooting chain and JSONL/Parquet export, all computed from Store reads. */
export { buildReport, compareEnvironments, foldReason, generationReport, runReport, thin } from './report-data.js';
export type {
  BatchView,
  EnvironmentComparison,
  EnvironmentVersion,
  GenerationReport,
  HeatmapCell,
  PassKRowView,
  ReportData,
  ReportOptions,
  RunReport,
  Series,
} from './report-data.js';
export { renderReportHtml } from './report-html.js';
export type { EpisodeScreenshots, RenderOptions } from './report-html.js';
export { writeRunReport } from './write-report.js';
export type { StoreSource } from './write-report.js';
export { diagnose, swing, DOCTOR_DEFAULTS } from './doctor.js';
export type { DoctorCheck, DoctorOptions, DoctorReport, DoctorStep, DoctorStepName, DoctorThresholds, Finding, FindingSeverity } from './doctor.js';
export {
  encodeExport,
  episodeFromRow,
  EXPORT_COLUMNS,
  EXPORT_FORMATS,
  EXPORT_KINDS,
  exportRows,
  taskFromRow,
  toJsonl,
  toParquet,
  transitionFromRow,
} from './export.js';
export type { ColumnSpec, ColumnType, ExportFormat, ExportKind, ExportOptions, ExportRow, ExportTable } from './export.js';
export { toChatTrajectory } from './chat.js';
export type { TrajectoryMessage, TrajectoryTool, TrajectoryToolCall } from './chat.js';
export { readRunTimeline, resolveRun } from './run-timeline.js';
export type { CurriculumPoint, EpisodeEvent, EvalPoint, GuardPoint, RunTimeline } from './run-timeline.js';
export { binomial, passHatK, passKTable } from './metrics.js';
export type { PassKRow, Trial } from './metrics.js';
