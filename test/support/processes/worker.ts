import 'reflect-metadata';
import { loadConfig } from '../../../src/core/config/config';
import { exitOnStartupError } from '../../../src/core/lifecycle';
import { startWorker } from '../../../src/worker';
import { SpineTestModule } from '../spine-test.module';

/** ROLE=worker process with the spine's test-only subscribers and processor (spawned by e2e specs). */
startWorker(loadConfig(), [SpineTestModule]).catch(exitOnStartupError);
