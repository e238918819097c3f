"""Stand-in for helpers/notification.py: notifications are recorded, not shown."""
from enum import Enum


class NotificationType(Enum):
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"
    PROGRESS = "progress"


class NotificationPriority(Enum):
    NORMAL = 10
    HIGH = 20


class NotificationManager:
    sent: list[dict] = []  # what the stand-in "showed", newest last

    @staticmethod
    def send_notification(type: NotificationType, priority: NotificationPriority, message: str,
                          title: str = "", detail: str = "", display_time: int = 3,
                          group: str = "", id: str = ""):
        item = dict(type=type, priority=priority, message=message, title=title,
                    detail=detail, display_time=display_time, group=group, id=id)
        NotificationManager.sent.append(item)
        return item
