/** The paths only the management port serves (`createManagementApp`); a module of its own so tracing can name them without loading express. */
export const MANAGEMENT_PATHS = ['/healthz', '/readyz', '/metrics'] as const;
