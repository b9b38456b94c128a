//! Categories: the grouped list, one category, and one category in a month (GET, and PATCH of
//! `budgeted` only).

use axum::extract::{Path, State};
use ledgerops::ynab_model::{
    CategoriesData, CategoryData, PatchMonthCategoryWrapper, SaveCategoryData,
};

use super::months::resolve_month;
use super::{Answer, DeltaQuery, Shared, data};
use crate::error::not_found;
use crate::extract::{ApiJson, ApiQuery};

pub async fn list(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<DeltaQuery>,
) -> Answer<CategoriesData> {
    sim.read(&plan_id, |view| {
        Ok(data(CategoriesData {
            category_groups: view.category_groups(q.last_knowledge_of_server),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn get(
    State(sim): Shared,
    Path((plan_id, category_id)): Path<(String, String)>,
) -> Answer<CategoryData> {
    sim.read(&plan_id, |view| {
        let category = view
            .plan
            .category(&category_id)
            .ok_or_else(|| not_found("category"))?;
        Ok(data(CategoryData {
            category: view.category(category),
        }))
    })
}

pub async fn get_for_month(
    State(sim): Shared,
    Path((plan_id, month, category_id)): Path<(String, String, String)>,
) -> Answer<CategoryData> {
    sim.read(&plan_id, |view| {
        let month = resolve_month(view, &month)?;
        let category = view
            .plan
            .category(&category_id)
            .ok_or_else(|| not_found("category"))?;
        Ok(data(CategoryData {
            category: view.category_at(category, &month),
        }))
    })
}

pub async fn assign(
    State(sim): Shared,
    Path((plan_id, month, category_id)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<PatchMonthCategoryWrapper>,
) -> Answer<SaveCategoryData> {
    let month = sim.read(&plan_id, |view| resolve_month(view, &month))?;
    sim.write(
        &plan_id,
        |plan, knowledge| {
            let stamped = plan
                .categories
                .iter_mut()
                .find(|c| c.record.id == category_id && !c.record.deleted)
                .ok_or_else(|| not_found("category"))?;
            stamped.knowledge = knowledge;
            let record = plan.month_mut(&month);
            record.knowledge = knowledge;
            record
                .record
                .budgeted
                .insert(category_id.clone(), body.category.budgeted);
            Ok(())
        },
        |view, (), knowledge| {
            let category = view.plan.category(&category_id).expect("just written");
            data(SaveCategoryData {
                category: view.category_at(category, &month),
                server_knowledge: knowledge,
            })
        },
    )
}
