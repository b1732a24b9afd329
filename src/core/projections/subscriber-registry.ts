import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { REACTOR_METADATA, ReactorDefinition, ReactorHandler } from '../reactors/reactor';
import {
  PROJECTION_METADATA,
  ProjectionDefinition,
  ProjectionHandler,
  RegisteredProjection,
} from './projection';

export interface RegisteredReactor {
  definition: ReactorDefinition;
  handler: ReactorHandler;
}

/** Finds every provider decorated with @Projection or @Reactor across feature modules. */
@Injectable()
export class SubscriberRegistry implements OnModuleInit {
  private projectionList: RegisteredProjection[] = [];
  private reactorList: RegisteredReactor[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const seen = new Set<string>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as object | undefined;
      const type = wrapper.metatype;
      if (!instance || !type) continue;
      const p = Reflect.getMetadata(PROJECTION_METADATA, type) as ProjectionDefinition | undefined;
      const r = Reflect.getMetadata(REACTOR_METADATA, type) as ReactorDefinition | undefined;
      for (const def of [p, r]) {
        if (!def) continue;
        if (seen.has(def.name)) throw new Error(`Two subscribers are named "${def.name}"`);
        seen.add(def.name);
      }
      if (p) this.projectionList.push({ definition: p, handler: instance as ProjectionHandler });
      if (r) this.reactorList.push({ definition: r, handler: instance as ReactorHandler });
    }
  }

  projections(): RegisteredProjection[] {
    return this.projectionList;
  }

  reactors(): RegisteredReactor[] {
    return this.reactorList;
  }

  projection(name: string): RegisteredProjection | undefined {
    return this.projectionList.find((p) => p.definition.name === name);
  }

  projectionsHandling(types: Set<string>): string[] {
    return this.projectionList
      .filter((p) => p.definition.eventTypes === 'all' || p.definition.eventTypes.some((t) => types.has(t)))
      .map((p) => p.definition.name);
  }
}
