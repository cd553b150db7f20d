// Filled in by the admin-API work.
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.ts';

export const adminAuditRoutes = new Hono<AppEnv>();
