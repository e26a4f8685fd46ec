/**
 * The built-in catalogue: every type of the Consolidated Data Service API with its own
 * fields and their wire kinds, in the spec's order. The common base fields are in `BASE_FIELDS`.
 */

export const CATALOGUE_VERSION = '5.0.0';

export const BASE_FIELDS = {
  id: 'String',
  createdAt: 'DateTime',
  createdBy: 'String',
  updatedAt: 'DateTime',
  updatedBy: 'String',
  deletedBy: 'String',
  deletedAt: 'DateTime',
  schemaVersion: 'String',
  InSync: 'Boolean',
  createdActivityId: 'String',
  lastUpdatedActivityId: 'String',
  deletedActivityId: 'String',
  deletedTimestamp: 'Int64',
  modifiedTimestamp: 'Int64',
  dirtyTimestamp: 'Int64',
  canBeDisposed: 'Boolean',
  extra: 'Dictionary',
  ExtraElements: 'IDictionary',
} as const;

const PRODUCTION = {
  pwi: 'String', wellId: 'String', prodDate: 'DateTime', uptime: 'Duration', duration: 'Duration',
  daysOn: 'Double', monthsOn: 'Double', casingPressure: 'Pressure', casingTemp: 'Temperature',
  flowlinePressure: 'Pressure', tubingPressure: 'Pressure', tubingTemp: 'Temperature',
  gasLiftRate: 'GasRate', gasLiftVol: 'GasVolume', oilRate: 'LiquidRate', oilVol: 'LiquidVolume',
  oilCum: 'LiquidVolume', condensateRate: 'LiquidRate', condensateVol: 'LiquidVolume',
  condensateCum: 'LiquidVolume', gasRate: 'GasRate', gasVol: 'GasVolume', gasCum: 'GasVolume',
  waterRate: 'LiquidRate', waterVol: 'LiquidVolume', waterCum: 'LiquidVolume', boeRate: 'BoeRate',
  boeVol: 'BoeVolume', boeCum: 'BoeVolume', waterInjRate: 'LiquidRate', waterInjVol: 'LiquidVolume',
  waterInjCum: 'LiquidVolume', gasInjRate: 'GasRate', gasInjVol: 'GasVolume', gasInjCum: 'GasVolume',
  wellCount: 'Int32', forecast: 'ForecastProductionData', wellName: 'String',
} as const;

export const TYPES = {
  WorkspaceDefinition: { pid: 'String', name: 'String', definition: 'ForgeRouteDefinition' },
  DailyProduction: PRODUCTION,
  MonthlyProduction: PRODUCTION,
  Well: {
    pwi: 'String', wellId: 'String', rigId: 'String', name: 'String', operatorName: 'String',
    isVirtual: 'Boolean', typeWellCount: 'Int32', typeAgg: 'String', pid: 'String',
    entityType: 'String', primaryProduct: 'String', statusCurrent: 'String',
    statusCurrentDate: 'DateTime', lastProductionDate: 'DateTime', permitDate: 'DateTime',
    spudDate: 'DateTime', completionDate: 'DateTime', finalDrillingDate: 'DateTime',
    rigReleaseDate: 'DateTime', drillAbandonmentDate: 'DateTime', suspendedDate: 'DateTime',
    abandonmentDate: 'DateTime', firstProductionDate: 'DateTime', leaseName: 'String',
    leaseNumber: 'String', wellNumber: 'String', fieldName: 'String', basinName: 'String',
    reservoirName: 'String', lateralLength: 'Length', fracStages: 'Int32', totalProppant: 'Mass',
    totalFluidPumped: 'Volume', perforationUpper: 'Length', totalDepth: 'Length',
    measuredDepth: 'Length', formationName: 'String', stateName: 'String', countyName: 'String',
    countryName: 'String', surfaceLoc: 'GeoPoint', midPointLoc: 'GeoPoint',
    bottomHoleLoc: 'GeoPoint', aoi: 'GeoMultiPolygon', production: 'ProductionForecast',
    prod: 'ProductionSummary', eur: 'EUREstimate', eurLatest: 'EUREstimate',
    typeEUR: 'TypeEUREstimate', typeEURLatest: 'TypeEUREstimate', typeWeight: 'Double',
    reserveCategory: 'String', groups: 'HashSet',
  },
  Setting: {
    name: 'String', parentId: 'String', referenceId: 'String', scope: 'SettingScope',
    version: 'String', data: 'String',
  },
  Schedule: {
    pid: 'String', name: 'String', notes: 'ICollection', economicScenarios: 'ICollection',
    priceScenarios: 'ICollection', curves: 'ICollection', wells: 'ICollection',
    status: 'ScheduleStatus', autoConfig: 'SmartScheduleConfiguration',
  },
  Annotation: {
    annotationType: 'AnnotationType', userId: 'String', pid: 'String', route: 'String',
    context: 'Dictionary', targetId: 'String', targetType: 'String', partName: 'String',
    threadId: 'String', mentionIds: 'HashSet', content: 'String',
  },
  Link: {
    parentId: 'String', childId: 'String', parentType: 'String', childType: 'String',
    linkType: 'String',
  },
  Plugin: {
    name: 'String', version: 'String', description: 'String', namespace: 'String',
    company: 'String', enabled: 'Boolean', errorMessage: 'String', containers: 'ICollection',
    triggers: 'ICollection', events: 'ICollection', tasks: 'ICollection',
  },
  WellStat: {
    modelName: 'String', version: 'String', pid: 'String', pwi: 'String', wellId: 'String',
    wellName: 'String', well: 'Well', cube: 'CubeStat', cmplJob: 'CompletionJob',
    survey: 'WellDirectionalSurveyStat', prod: 'ProdStat', decline: 'DeclineCurveStat',
    dca: 'DeclineCurveAnalysisModel', hasError: 'Boolean', errorMessage: 'String',
  },
  JobResult: {
    taskName: 'String', pid: 'String', taskId: 'String', cronJobId: 'String', options: 'String',
    startedAt: 'DateTime', completedAt: 'DateTime', scheduledAt: 'DateTime',
    expectedFinish: 'DateTime', isCancelled: 'Boolean', executionTime: 'Single',
    jobStatus: 'JobStatus', position: 'Int32', activityId: 'String', message: 'String',
    summary: 'String', log: 'ICollection', progress: 'Double', result: 'Object',
    resultType: 'String',
  },
  CronJob: {
    name: 'String', schedule: 'CronSchedule', taskName: 'String', taskOptions: 'String',
    scheduleSummary: 'String', LastExecutionTime: 'DateTime',
  },
  WellIdentifier: {
    pwi: 'String', identifier: 'String', sourceId: 'String', isWellId: 'Boolean',
    identifierType: 'IdentifierTypes',
  },
  DeclineCurveAnalysisModel: {
    pwi: 'String', pid: 'String', workflowState: 'ModelWorkflowState', version: 'Int32',
    name: 'String', isLatest: 'Boolean', submittedBy: 'String', lastExternalExport: 'DateTime',
    submittedAt: 'DateTime', approvedBy: 'String', approvedAt: 'DateTime', rejectedBy: 'String',
    rejectedAt: 'DateTime', model: 'FullFluidDeclineCurveAnalysis', forecastSummary: 'ForecastSummary',
    fitEvaluation: 'FluidEvaluationSummary', vars: 'ForecastVariables', isTypeCurve: 'Boolean',
  },
  VersionDocument: {
    type: 'String', oid: 'String', body: 'Object', event: 'String', versionTimestamp: 'Int64',
  },
  Job: {
    name: 'String', typeName: 'String', parentId: 'String', expireAt: 'DateTime',
    executions: 'Int32', lastExecution: 'DateTime', payload: 'String', externalJobId: 'String',
    startAt: 'DateTime', schedule: 'String', maxExecutions: 'Int32', executeImmediately: 'Boolean',
    endAt: 'DateTime', status: 'JobStatus', lastProgress: 'Double',
  },
  Notification: {
    userId: 'String', targetId: 'String', targetDataType: 'String',
    notificationType: 'NotificationType', status: 'NotificationStatus',
  },
  AppSetting: {
    orgName: 'String', databaseUnitsDefinitionId: 'String', reportingUnitsDefinitionId: 'String',
    displayTimeZoneId: 'String', emailSettings: 'EmailSettings',
    forecastAppSettings: 'ForecastAppSettings',
  },
  TypeCurveGenerator: {
    name: 'String', wellIdPrefix: 'String', pid: 'String', aggregations: 'List',
    minWellCount: 'Double', lastGeneratedAt: 'DateTime',
  },
  EconomicsProject: {
    pid: 'String', name: 'String', cashFlow: 'CashflowDetails',
    evaluationSummary: 'EvaluationSummary', scheduleIds: 'List',
  },
  Petron: {
    name: 'String', description: 'String', notes: 'String', type: 'String', ownerId: 'String',
    unitsId: 'String', timeZoneId: 'String', bounds: 'GeoMultiPolygon', isPublic: 'Boolean',
    assigneeIds: 'HashSet', approverIds: 'HashSet', approvalSummary: 'PetronApprovalSummary',
    // A sample response of the service shows this array; its element type is unspecified.
    dockedApps: 'ICollection',
  },
  AnnotationTag: {
    approvalStatus: 'ApprovalStatus', annotationType: 'AnnotationType', content: 'String',
  },
  RealTimeProduction: {
    pwi: 'String', wellId: 'String', dailyProdId: 'String', time: 'DateTime', isValid: 'Boolean',
    receivedAt: 'DateTime', casingPressure: 'Pressure', casingTemp: 'Temperature',
    flowlinePressure: 'Pressure', tubingPressure: 'Pressure', tubingTemp: 'Temperature',
    gasLiftRate: 'GasRate', oilRate: 'LiquidRate', condensateRate: 'LiquidRate',
    gasRate: 'GasRate', waterRate: 'LiquidRate', gasLiftRateAlloc: 'GasRate',
    oilRateAlloc: 'LiquidRate', condensateRateAlloc: 'LiquidRate', gasRateAlloc: 'GasRate',
    waterRateAlloc: 'LiquidRate', wellName: 'String',
  },
  ActivityLog: {
    name: 'String', group: 'String', method: 'ActivityMethod', location: 'String',
    runLocale: 'RunLocation', toolName: 'String', toolVersion: 'String', message: 'String',
    hasError: 'Boolean', errorName: 'String', errorMessage: 'String', startTime: 'DateTime',
    endTime: 'DateTime', duration: 'Double', dataTypes: 'HashSet', numDocsCreated: 'Int32',
    numDocsModified: 'Int32', numDocsDeleted: 'Int32', logInfo: 'String', logError: 'String',
    meta: 'Dictionary',
  },
  UnitsDefinition: {
    name: 'String',
    Angle: 'String', AngleUnit: 'AngleUnit',
    Area: 'String', AreaUnit: 'AreaUnit',
    AreaDensity: 'String', AreaDensityUnit: 'AreaDensityUnit',
    Density: 'String', DensityUnit: 'DensityUnit',
    Duration: 'String', DurationUnit: 'DurationUnit',
    Volume: 'String', VolumeUnit: 'VolumeUnit',
    VolumeFlow: 'String', VolumeFlowUnit: 'VolumeFlowUnit',
    Mass: 'String', MassUnit: 'MassUnit',
    Length: 'String', LengthUnit: 'LengthUnit',
    Pressure: 'String', PressureUnit: 'PressureUnit',
    Force: 'String', ForceUnit: 'ForceUnit',
    Temperature: 'String', TemperatureUnit: 'TemperatureUnit',
    Torque: 'String', TorqueUnit: 'TorqueUnit',
    RotationalSpeed: 'String', RotationalSpeedUnit: 'RotationalSpeedUnit',
    Speed: 'String', SpeedUnit: 'SpeedUnit',
    Ratio: 'String', RatioUnit: 'RatioUnit',
    GasRate: 'String', GasRateUnit: 'GasRateUnit',
    GasVolume: 'String', GasVolumeUnit: 'GasVolumeUnit',
    LiquidRate: 'String', LiquidRateUnit: 'LiquidRateUnit',
    LiquidVolume: 'String', LiquidVolumeUnit: 'LiquidVolumeUnit',
    BoeRate: 'String', BoeRateUnit: 'BoeRateUnit',
    BoeVolume: 'String', BoeVolumeUnit: 'BoeVolumeUnit',
  },
  Comment: {},
} as const;

/** Default unique keys (besides `id`, unique everywhere). */
export const DEFAULT_UNIQUE_KEYS = {
  Well: [['pwi']],
  DailyProduction: [['pwi', 'prodDate']],
  MonthlyProduction: [['pwi', 'prodDate']],
  RealTimeProduction: [['pwi', 'time']],
  WellIdentifier: [['identifier', 'identifierType']],
} as const;

/** Fields indexed wherever a type has them: the ones users filter on most. */
export const DEFAULT_INDEXED_FIELDS = ['pwi', 'wellId', 'pid', 'prodDate', 'name', 'parentId', 'childId', 'targetId', 'userId'] as const;
