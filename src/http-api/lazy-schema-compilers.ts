/**
 * Route schemas compiled when first needed instead of when the server starts. Fastify compiles
 * every route's JSON Schemas (an Ajv validator per request part, a fast-json-stringify
 * serializer per response) while its plugins load, before it listens: for the HTTP API that is
 * most of the time `threadline serve` takes between opening the database and answering
 * `/healthz`. {@link lazySchemaCompilers} gives Fastify compilers that return stand-ins: the
 * real validator or serializer is built (with Fastify's own default compilers, loaded only then)
 * the first time a request needs it, or earlier by {@link LazySchemaCompilers.warm}, which
 * builds the rest one per turn of the event loop once the server is up.
 *
 * Requests see the same validation, coercion, defaults and error messages as with Fastify's
 * defaults: the stand-ins forward to the real functions (with the `parentData` Ajv needs to
 * replace a root value, and its `errors`). Fastify treats compilers from a factory as custom,
 * which changes one thing: a `headers` schema is not lower-cased for you (no route here has one).
 *
 * @module
 */
import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

type Factories = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;
type ValidatorFactory = NonNullable<Factories["buildValidator"]>;
type SerializerFactory = NonNullable<Factories["buildSerializer"]>;
/** What Fastify passes a compiler: one schema of one route. */
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
}
type ValidatorCompiler = (route: RouteSchema) => unknown;
type SerializerCompiler = (route: RouteSchema) => unknown;
/** A built validator: called with the data (and Ajv's parent context); failures in `errors`. */
type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serialize = (data: unknown) => string;

/** Fastify's own default compilers, required from where Fastify requires them (its dependencies), and only when first used. */
function fastifyDefaults(): { validator: ValidatorFactory; serializer: SerializerFactory } {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve("fastify"));
  return {
    validator: (fromFastify("@fastify/ajv-compiler") as () => ValidatorFactory)(),
    serializer: (fromFastify("@fastify/fast-json-stringify-compiler") as () => SerializerFactory)(),
  };
}

/** The compilers of {@link lazySchemaCompilers}: pass `schemaController` to `Fastify()`. */
export interface LazySchemaCompilers {
  /** The `schemaController` option of `Fastify()`. */
  schemaController: NonNullable<FastifyServerOptions["schemaController"]>;
  /**
   * Builds every schema not built yet, one per event-loop turn (resolves when done, or early once
   * `signal` aborts; a schema that fails to build is reported to `onError`).
   */
  warm(onError?: (error: unknown, route: { method: string; url: string }) => void, signal?: AbortSignal): Promise<void>;
  /** How many validators and serializers are still to be built. */
  readonly pending: number;
}

/**
 * Compilers that build each route schema on first use (or in {@link LazySchemaCompilers.warm}).
 *
 * @example
 * const schemas = lazySchemaCompilers();
 * const http = Fastify({ schemaController: schemas.schemaController });
 * // … register routes, listen …
 * void schemas.warm((err, route) => logger.warn({ err, ...route }, "route schema failed to build"));
 */
export function lazySchemaCompilers(): LazySchemaCompilers {
  let defaults: ReturnType<typeof fastifyDefaults> | null = null;
  const real = (): ReturnType<typeof fastifyDefaults> => (defaults ??= fastifyDefaults());
  /** Builders not run yet, with the route they belong to. */
  const pending = new Map<() => void, { method: string; url: string }>();

  const buildValidator = ((externalSchemas: unknown, options: unknown) => {
    let compiler: ValidatorCompiler | null = null;
    return (route: RouteSchema) => {
      let built: Validate | null = null;
      const build = (): Validate => {
        if (built === null) {
          pending.delete(build);
          compiler ??= (real().validator as (schemas: unknown, options: unknown) => ValidatorCompiler)(externalSchemas, options);
          built = compiler(route) as unknown as Validate;
        }
        return built;
      };
      pending.set(build, { method: route.method, url: route.url });
      const validate = ((data: unknown, context?: unknown) => (context === undefined ? build()(data) : build()(data, context))) as Validate;
      Object.defineProperties(validate, {
        // Fastify reads these on the function it was given: forward them to the real one.
        errors: { get: () => built?.errors, configurable: true },
        schemaEnv: { get: () => build().schemaEnv, configurable: true },
      });
      return validate;
    };
  }) as unknown as ValidatorFactory;

  const buildSerializer = ((externalSchemas: unknown, options: unknown) => {
    let compiler: SerializerCompiler | null = null;
    return (route: RouteSchema) => {
      let built: Serialize | null = null;
      const build = (): Serialize => {
        if (built === null) {
          pending.delete(build);
          compiler ??= (real().serializer as (schemas: unknown, options: unknown) => SerializerCompiler)(externalSchemas, options);
          built = compiler(route) as Serialize;
        }
        return built;
      };
      pending.set(build, { method: route.method, url: route.url });
      return (data: unknown) => build()(data);
    };
  }) as unknown as SerializerFactory;

  return {
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
    get pending() {
      return pending.size;
    },
    async warm(onError, signal) {
      const aborted = (): boolean => signal?.aborted === true;
      while (!aborted()) {
        const next = pending.entries().next();
        if (next.done) return;
        const [build, route] = next.value;
        await new Promise((resolve) => setImmediate(resolve));
        if (!pending.has(build) || aborted()) continue;
        try {
          build();
        } catch (error) {
          pending.delete(build);
          onError?.(error, route);
        }
      }
    },
  };
}
