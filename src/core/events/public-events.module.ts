import { Controller, DynamicModule, Get, Module } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/auth.decorators';
import { featureOf, FeatureModule } from '../features/feature';
import { GuardedEventDataCatalogue } from './guarded-event-data';
import { PublicEventCatalogue } from './public-events';

export class EventTypeResponse {
  @ApiProperty({ example: 'member:updated' }) eventType: string;
  @ApiProperty() description: string;
  @ApiProperty({ description: 'the feature that emits it', example: 'identity' }) feature: string;
  @ApiProperty({
    type: [String],
    description: 'top-level payload fields beside event, eventId, timestamp, workspace',
  })
  payloadFields: string[];
}

export class EventTypesResponse {
  @ApiProperty({ type: [EventTypeResponse] }) eventTypes: EventTypeResponse[];
}

/**
 * GET /event-types: the public events this service emits, for building event rules.
 * Public like the resource registry: it describes the API, holds no tenant data, and
 * never names the internal events behind each type.
 */
@ApiTags('events')
@Controller('event-types')
export class EventTypesController {
  constructor(private readonly catalogue: PublicEventCatalogue) {}

  @Get()
  @Public()
  @ApiOkResponse({ type: EventTypesResponse })
  list(): EventTypesResponse {
    return {
      eventTypes: this.catalogue.list().map((d) => ({
        eventType: d.name,
        description: d.description,
        feature: d.feature,
        payloadFields: [...d.payloadFields],
      })),
    };
  }
}

/**
 * The catalogue of the features' public events (injectable as PublicEventCatalogue) and its
 * route, and the guards on their events' data (GuardedEventDataCatalogue).
 */
@Module({})
export class PublicEventsModule {
  static forFeatures(features: readonly FeatureModule[]): DynamicModule {
    const catalogue = new PublicEventCatalogue(features.flatMap((f) => featureOf(f).publicEvents ?? []));
    const guards = new GuardedEventDataCatalogue(
      features.flatMap((f) => featureOf(f).guardedEventData ?? []),
    );
    return {
      module: PublicEventsModule,
      global: true,
      controllers: [EventTypesController],
      providers: [
        { provide: PublicEventCatalogue, useValue: catalogue },
        { provide: GuardedEventDataCatalogue, useValue: guards },
      ],
      exports: [PublicEventCatalogue, GuardedEventDataCatalogue],
    };
  }
}
