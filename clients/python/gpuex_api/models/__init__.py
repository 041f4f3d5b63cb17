""" Contains all the data models used in inputs/outputs """

from .account_role import AccountRole
from .action import Action
from .adjustment_request import AdjustmentRequest
from .adjustment_request_tags_type_0 import AdjustmentRequestTagsType0
from .adjustment_view import AdjustmentView
from .admin_node_request import AdminNodeRequest
from .agent_placement import AgentPlacement
from .agent_register_request import AgentRegisterRequest
from .agent_register_response import AgentRegisterResponse
from .api_key_created import ApiKeyCreated
from .api_key_view import ApiKeyView
from .artifact import Artifact
from .assignment_preempt import AssignmentPreempt
from .assignment_preempt_action import AssignmentPreemptAction
from .assignment_start import AssignmentStart
from .assignment_start_action import AssignmentStartAction
from .assignment_start_env import AssignmentStartEnv
from .assignment_stop import AssignmentStop
from .assignment_stop_action import AssignmentStopAction
from .attempt_view import AttemptView
from .audit_entry import AuditEntry
from .audit_entry_details import AuditEntryDetails
from .audit_page import AuditPage
from .backend_kind import BackendKind
from .bid_view import BidView
from .book_entry import BookEntry
from .budget_request import BudgetRequest
from .budget_view import BudgetView
from .capacity_profile import CapacityProfile
from .checkpoint_plan import CheckpointPlan
from .checkpoint_request import CheckpointRequest
from .checkpoint_view import CheckpointView
from .concurrency import Concurrency
from .concurrency_point import ConcurrencyPoint
from .conversion_view import ConversionView
from .convert_request import ConvertRequest
from .cordon_request import CordonRequest
from .create_api_key_request import CreateApiKeyRequest
from .create_import_format import CreateImportFormat
from .create_node_request import CreateNodeRequest
from .created_node import CreatedNode
from .created_webhook import CreatedWebhook
from .credit_request import CreditRequest
from .credit_view import CreditView
from .declared_gpu import DeclaredGpu
from .default_secret import DefaultSecret
from .delivery_page import DeliveryPage
from .delivery_state import DeliveryState
from .delivery_view import DeliveryView
from .derived_prices import DerivedPrices
from .earnings import Earnings
from .earnings_group import EarningsGroup
from .earnings_period import EarningsPeriod
from .end_reason import EndReason
from .event_page import EventPage
from .event_type import EventType
from .export_format import ExportFormat
from .field_error import FieldError
from .fill_view import FillView
from .fill_view_report import FillViewReport
from .focus_json_row import FocusJsonRow
from .forecast_point import ForecastPoint
from .forecast_view import ForecastView
from .get_invoice_format import GetInvoiceFormat
from .gpu_fields import GpuFields
from .gpu_inventory import GpuInventory
from .gpu_metrics import GpuMetrics
from .gpu_mode import GpuMode
from .gpu_model_view import GpuModelView
from .gpu_model_view_peak_tflops import GpuModelViewPeakTflops
from .gpu_view import GpuView
from .gpu_view_metrics_type_0 import GpuViewMetricsType0
from .gpuex_cost import GpuexCost
from .group_profile import GroupProfile
from .health import Health
from .heartbeat_request import HeartbeatRequest
from .heartbeat_response import HeartbeatResponse
from .held_units import HeldUnits
from .held_utilization import HeldUtilization
from .history_interval import HistoryInterval
from .history_point import HistoryPoint
from .history_prices import HistoryPrices
from .history_volume import HistoryVolume
from .host_inventory import HostInventory
from .host_limits import HostLimits
from .import_format import ImportFormat
from .invoice import Invoice
from .invoice_item import InvoiceItem
from .invoice_item_tags import InvoiceItemTags
from .invoice_summary import InvoiceSummary
from .isolation import Isolation
from .lease_durations import LeaseDurations
from .lease_logs import LeaseLogs
from .lease_output import LeaseOutput
from .lease_outputs import LeaseOutputs
from .lease_page import LeasePage
from .lease_report import LeaseReport
from .lease_run_state import LeaseRunState
from .lease_state import LeaseState
from .lease_view import LeaseView
from .lease_view_placement import LeaseViewPlacement
from .ledger_line import LedgerLine
from .ledger_page import LedgerPage
from .list_leases_state import ListLeasesState
from .list_orders_mode import ListOrdersMode
from .list_orders_state import ListOrdersState
from .listing_page import ListingPage
from .listing_request import ListingRequest
from .listing_view import ListingView
from .load_profile import LoadProfile
from .load_profile_input import LoadProfileInput
from .load_shape import LoadShape
from .load_shape_input import LoadShapeInput
from .login_request import LoginRequest
from .logs_upload import LogsUpload
from .market_forecast_view import MarketForecastView
from .market_stats import MarketStats
from .market_stats_leases_by_state import MarketStatsLeasesByState
from .method import Method
from .mig_instance_inventory import MigInstanceInventory
from .mig_instance_metrics import MigInstanceMetrics
from .mig_mode import MigMode
from .mig_profile_view import MigProfileView
from .mix_line import MixLine
from .mode import Mode
from .new_webhook import NewWebhook
from .node_detail import NodeDetail
from .node_status import NodeStatus
from .node_summary import NodeSummary
from .ohlc import Ohlc
from .on_interrupt import OnInterrupt
from .order_page import OrderPage
from .order_request import OrderRequest
from .order_request_env_type_0 import OrderRequestEnvType0
from .order_request_tags_type_0 import OrderRequestTagsType0
from .order_state import OrderState
from .order_type import OrderType
from .order_view import OrderView
from .order_view_request import OrderViewRequest
from .order_view_tags import OrderViewTags
from .partition_type_0 import PartitionType0
from .partition_type_0_kind import PartitionType0Kind
from .partition_type_1 import PartitionType1
from .partition_type_1_kind import PartitionType1Kind
from .partition_type_2 import PartitionType2
from .partition_type_2_kind import PartitionType2Kind
from .pool_stats import PoolStats
from .precision import Precision
from .price_change_view import PriceChangeView
from .price_history_unit import PriceHistoryUnit
from .price_update import PriceUpdate
from .price_view import PriceView
from .problem import Problem
from .process_metrics import ProcessMetrics
from .profile_import import ProfileImport
from .profile_import_detail import ProfileImportDetail
from .profile_import_list import ProfileImportList
from .profile_instances import ProfileInstances
from .profile_source import ProfileSource
from .put_region_request import PutRegionRequest
from .qos import Qos
from .quote import Quote
from .quote_line import QuoteLine
from .quote_option import QuoteOption
from .quote_request import QuoteRequest
from .readiness import Readiness
from .refresh_request import RefreshRequest
from .refused_usage import RefusedUsage
from .region import Region
from .register_request import RegisterRequest
from .registered_role import RegisteredRole
from .registry_auth import RegistryAuth
from .rejected_row import RejectedRow
from .replica_view import ReplicaView
from .resale_offer import ResaleOffer
from .resale_offer_slots_item import ResaleOfferSlotsItem
from .resources import Resources
from .resumed_from import ResumedFrom
from .review_decision import ReviewDecision
from .role import Role
from .run_state import RunState
from .scrub_report import ScrubReport
from .set_role_request import SetRoleRequest
from .slice_quote import SliceQuote
from .slice_quote_placement import SliceQuotePlacement
from .slice_quote_unit_prices import SliceQuoteUnitPrices
from .slice_quote_units import SliceQuoteUnits
from .slice_view import SliceView
from .smallest_passed import SmallestPassed
from .status_report_ended import StatusReportEnded
from .status_report_ended_status import StatusReportEndedStatus
from .status_report_failed import StatusReportFailed
from .status_report_failed_status import StatusReportFailedStatus
from .status_report_provisioned import StatusReportProvisioned
from .status_report_provisioned_status import StatusReportProvisionedStatus
from .stored_event import StoredEvent
from .stored_event_data import StoredEventData
from .tco import Tco
from .tco_assumptions import TcoAssumptions
from .tco_request import TcoRequest
from .tco_saving import TcoSaving
from .tflops_type_0 import TflopsType0
from .time_in_force import TimeInForce
from .token_response import TokenResponse
from .trial_list import TrialList
from .trial_request import TrialRequest
from .trial_request_env_type_0 import TrialRequestEnvType0
from .trial_run import TrialRun
from .trial_state import TrialState
from .trial_view import TrialView
from .unit import Unit
from .unit_prices import UnitPrices
from .units_quote import UnitsQuote
from .units_view import UnitsView
from .usage_ack import UsageAck
from .usage_batch import UsageBatch
from .usage_group import UsageGroup
from .usage_group_units import UsageGroupUnits
from .usage_record import UsageRecord
from .usage_report import UsageReport
from .usage_view import UsageView
from .user_view import UserView
from .wallet_view import WalletView
from .webhook import Webhook
from .whole_node_cost import WholeNodeCost

__all__ = (
    "AccountRole",
    "Action",
    "AdjustmentRequest",
    "AdjustmentRequestTagsType0",
    "AdjustmentView",
    "AdminNodeRequest",
    "AgentPlacement",
    "AgentRegisterRequest",
    "AgentRegisterResponse",
    "ApiKeyCreated",
    "ApiKeyView",
    "Artifact",
    "AssignmentPreempt",
    "AssignmentPreemptAction",
    "AssignmentStart",
    "AssignmentStartAction",
    "AssignmentStartEnv",
    "AssignmentStop",
    "AssignmentStopAction",
    "AttemptView",
    "AuditEntry",
    "AuditEntryDetails",
    "AuditPage",
    "BackendKind",
    "BidView",
    "BookEntry",
    "BudgetRequest",
    "BudgetView",
    "CapacityProfile",
    "CheckpointPlan",
    "CheckpointRequest",
    "CheckpointView",
    "Concurrency",
    "ConcurrencyPoint",
    "ConversionView",
    "ConvertRequest",
    "CordonRequest",
    "CreateApiKeyRequest",
    "CreatedNode",
    "CreatedWebhook",
    "CreateImportFormat",
    "CreateNodeRequest",
    "CreditRequest",
    "CreditView",
    "DeclaredGpu",
    "DefaultSecret",
    "DeliveryPage",
    "DeliveryState",
    "DeliveryView",
    "DerivedPrices",
    "Earnings",
    "EarningsGroup",
    "EarningsPeriod",
    "EndReason",
    "EventPage",
    "EventType",
    "ExportFormat",
    "FieldError",
    "FillView",
    "FillViewReport",
    "FocusJsonRow",
    "ForecastPoint",
    "ForecastView",
    "GetInvoiceFormat",
    "GpuexCost",
    "GpuFields",
    "GpuInventory",
    "GpuMetrics",
    "GpuMode",
    "GpuModelView",
    "GpuModelViewPeakTflops",
    "GpuView",
    "GpuViewMetricsType0",
    "GroupProfile",
    "Health",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "HeldUnits",
    "HeldUtilization",
    "HistoryInterval",
    "HistoryPoint",
    "HistoryPrices",
    "HistoryVolume",
    "HostInventory",
    "HostLimits",
    "ImportFormat",
    "Invoice",
    "InvoiceItem",
    "InvoiceItemTags",
    "InvoiceSummary",
    "Isolation",
    "LeaseDurations",
    "LeaseLogs",
    "LeaseOutput",
    "LeaseOutputs",
    "LeasePage",
    "LeaseReport",
    "LeaseRunState",
    "LeaseState",
    "LeaseView",
    "LeaseViewPlacement",
    "LedgerLine",
    "LedgerPage",
    "ListingPage",
    "ListingRequest",
    "ListingView",
    "ListLeasesState",
    "ListOrdersMode",
    "ListOrdersState",
    "LoadProfile",
    "LoadProfileInput",
    "LoadShape",
    "LoadShapeInput",
    "LoginRequest",
    "LogsUpload",
    "MarketForecastView",
    "MarketStats",
    "MarketStatsLeasesByState",
    "Method",
    "MigInstanceInventory",
    "MigInstanceMetrics",
    "MigMode",
    "MigProfileView",
    "MixLine",
    "Mode",
    "NewWebhook",
    "NodeDetail",
    "NodeStatus",
    "NodeSummary",
    "Ohlc",
    "OnInterrupt",
    "OrderPage",
    "OrderRequest",
    "OrderRequestEnvType0",
    "OrderRequestTagsType0",
    "OrderState",
    "OrderType",
    "OrderView",
    "OrderViewRequest",
    "OrderViewTags",
    "PartitionType0",
    "PartitionType0Kind",
    "PartitionType1",
    "PartitionType1Kind",
    "PartitionType2",
    "PartitionType2Kind",
    "PoolStats",
    "Precision",
    "PriceChangeView",
    "PriceHistoryUnit",
    "PriceUpdate",
    "PriceView",
    "Problem",
    "ProcessMetrics",
    "ProfileImport",
    "ProfileImportDetail",
    "ProfileImportList",
    "ProfileInstances",
    "ProfileSource",
    "PutRegionRequest",
    "Qos",
    "Quote",
    "QuoteLine",
    "QuoteOption",
    "QuoteRequest",
    "Readiness",
    "RefreshRequest",
    "RefusedUsage",
    "Region",
    "RegisteredRole",
    "RegisterRequest",
    "RegistryAuth",
    "RejectedRow",
    "ReplicaView",
    "ResaleOffer",
    "ResaleOfferSlotsItem",
    "Resources",
    "ResumedFrom",
    "ReviewDecision",
    "Role",
    "RunState",
    "ScrubReport",
    "SetRoleRequest",
    "SliceQuote",
    "SliceQuotePlacement",
    "SliceQuoteUnitPrices",
    "SliceQuoteUnits",
    "SliceView",
    "SmallestPassed",
    "StatusReportEnded",
    "StatusReportEndedStatus",
    "StatusReportFailed",
    "StatusReportFailedStatus",
    "StatusReportProvisioned",
    "StatusReportProvisionedStatus",
    "StoredEvent",
    "StoredEventData",
    "Tco",
    "TcoAssumptions",
    "TcoRequest",
    "TcoSaving",
    "TflopsType0",
    "TimeInForce",
    "TokenResponse",
    "TrialList",
    "TrialRequest",
    "TrialRequestEnvType0",
    "TrialRun",
    "TrialState",
    "TrialView",
    "Unit",
    "UnitPrices",
    "UnitsQuote",
    "UnitsView",
    "UsageAck",
    "UsageBatch",
    "UsageGroup",
    "UsageGroupUnits",
    "UsageRecord",
    "UsageReport",
    "UsageView",
    "UserView",
    "WalletView",
    "Webhook",
    "WholeNodeCost",
)
